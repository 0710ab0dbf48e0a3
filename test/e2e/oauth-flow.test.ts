import type { Browser } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { chromiumMissing, hasChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, type Started } from "../helpers/cli.js";
import {
  approve,
  type Callback,
  connectWithOAuth,
  connectWithTokens,
  MemoryOAuthProvider,
  openSignIn,
  postForm,
} from "../helpers/oauth-flow.js";
import { oauthFlowHarness } from "../helpers/oauth-flow-harness.js";
import type { DocumentHost } from "../helpers/oauth-server.js";

const KEY = SANDBOX_API_KEY;

runnableOrSkipped(chromiumMissing(), "the OAuth sign-in tests (test/e2e/oauth-flow.test.ts)");

const h = oauthFlowHarness(isolatedEnv());
const { seen, raw, mcpStatus, keyNowhere } = h;
let cli: Started;
let issuer: string;
let mcpUrl: string;
let browser: Browser;
let callback: Callback;
let documents: DocumentHost;
let cimdUrl: string;
beforeAll(() => {
  ({ cli, issuer, mcpUrl, browser, callback, documents, cimdUrl } = h.state);
});

describe.runIf(hasChromium())("--auth oauth through the built CLI", () => {
  it("says which mode is on, and a bare request is told where to sign in", async () => {
    expect(cli.stdout()).toMatch(/^ {2}auth: oauth \(OAuth 2\.1/m);
    const bare = await raw("/mcp", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(bare.status).toBe(401);
    const challenge = bare.headers.get("www-authenticate") ?? "";
    expect(challenge).toMatch(/^Bearer /);
    const prmUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1] ?? "";
    expect(prmUrl).toBe(`${issuer}/.well-known/oauth-protected-resource/mcp`);
    for (const path of [
      "/.well-known/oauth-protected-resource/mcp",
      "/.well-known/oauth-protected-resource",
    ]) {
      const prm = (await (await raw(path)).json()) as Record<string, unknown>;
      expect(prm.resource).toBe(mcpUrl);
      expect(prm.authorization_servers).toEqual([issuer]);
      expect(prm.scopes_supported).toEqual(["mcp"]);
    }
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]) {
      const as = (await (await raw(path)).json()) as Record<string, unknown>;
      expect(as.issuer).toBe(issuer);
      expect(as.code_challenge_methods_supported).toEqual(["S256"]);
      expect(as.client_id_metadata_document_supported).toBe(true);
      expect(as.registration_endpoint).toBe(`${issuer}/oauth/register`);
      expect(as.revocation_endpoint).toBe(`${issuer}/oauth/revoke`);
      expect(as.token_endpoint_auth_methods_supported).toContain("none");
      expect(as.response_types_supported).toEqual(["code"]);
    }
    // The service key itself is no credential in this mode.
    expect(await mcpStatus(KEY)).toBe(401);
  });

  it("a CIMD host: PKCE sign-in with the key typed, a free and a paid call, a refresh, then revocation ends access", async () => {
    const provider = new MemoryOAuthProvider(callback.url, "ignored: the document names it", cimdUrl);
    let page = "";
    const client = await connectWithOAuth(mcpUrl, provider, async (url) => {
      expect(url.searchParams.get("client_id")).toBe(cimdUrl);
      expect(url.searchParams.get("code_challenge_method")).toBe("S256");
      expect(url.searchParams.get("resource")).toBe(mcpUrl);
      const signIn = await openSignIn(browser, url);
      page = await signIn.content();
      seen.push(page);
      const back = await approve(signIn, callback, { key: KEY });
      expect(back.get("error")).toBeNull();
      return back;
    });
    // The page named the client from its metadata document and where it returns.
    expect(page).toContain("CIMD Test Host");
    expect(page).toContain(new URL(callback.url).host);
    expect(documents.fetches("/client.json")).toBeGreaterThan(0);

    const models = await client.callTool({ name: "list_models", arguments: {} });
    seen.push(JSON.stringify(models));
    expect(models.isError).toBeFalsy();
    const paid = await client.callTool({
      name: "generate_image",
      arguments: { model: "sandbox-image-fast", prompt: "a lighthouse signed in by OAuth", wait: 0 },
    });
    seen.push(JSON.stringify(paid));
    expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
    const sc = paid.structuredContent as { created: boolean; task: { id: string } };
    expect(sc.created).toBe(true);
    // The record is the key's: a stdio-free check through list_requests on the same token.
    const listed = await client.callTool({ name: "list_requests", arguments: {} });
    expect(JSON.stringify(listed.structuredContent)).toContain(sc.task.id);
    await client.close();

    // A refresh rotates the refresh token; the new access token works.
    const before = provider.saved;
    const refreshed = await postForm(`${issuer}/oauth/token`, {
      grant_type: "refresh_token",
      refresh_token: before?.refresh_token ?? "",
      client_id: cimdUrl,
      resource: mcpUrl,
    });
    seen.push(JSON.stringify(refreshed.body));
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(before?.refresh_token);
    provider.saveTokens(refreshed.body as never);
    const again = await connectWithTokens(mcpUrl, provider);
    expect((await again.callTool({ name: "list_models", arguments: {} })).isError).toBeFalsy();
    await again.close();

    // Revoking the refresh token (RFC 7009) ends the grant: its access token is refused at once.
    const revoked = await postForm(`${issuer}/oauth/revoke`, {
      token: String(refreshed.body.refresh_token),
      token_type_hint: "refresh_token",
      client_id: cimdUrl,
    });
    expect(revoked.status).toBe(200);
    expect(await mcpStatus(String(refreshed.body.access_token))).toBe(401);
    const stale = await postForm(`${issuer}/oauth/token`, {
      grant_type: "refresh_token",
      refresh_token: String(refreshed.body.refresh_token),
      client_id: cimdUrl,
    });
    expect(stale.body.error).toBe("invalid_grant");
  });

  it("a DCR host with the sandbox button; two sign-ins of one key share its records; denying returns access_denied", async () => {
    const provider = new MemoryOAuthProvider(callback.url, "Registered Host");
    const client = await connectWithOAuth(mcpUrl, provider, async (url) => {
      const page = await openSignIn(browser, url);
      const html = await page.content();
      seen.push(html);
      expect(html).toContain("Registered Host");
      expect(html).toContain("Use the sandbox key");
      return approve(page, callback, { action: "sandbox" });
    });
    expect(provider.info?.client_id).toMatch(/^[\w-]+$/);
    const listed = await client.callTool({ name: "list_requests", arguments: {} });
    // The CIMD host's paid call above was made with the same key: its record is visible here.
    expect((listed.structuredContent as { requests: unknown[] }).requests.length).toBeGreaterThan(0);
    await client.close();

    const denier = new MemoryOAuthProvider(callback.url, "Denied Host");
    const refusal = await connectWithOAuth(mcpUrl, denier, async (url) => {
      const back = await approve(await openSignIn(browser, url), callback, { action: "deny" });
      expect(back.get("error")).toBe("access_denied");
      throw new Error("denied");
    }).catch((e: Error) => e.message);
    expect(refusal).toBe("denied");
  });

  it("the sign-in page forbids framing and third-party resources", async () => {
    const provider = new MemoryOAuthProvider(callback.url, "Header Host");
    await connectWithOAuth(mcpUrl, provider, async (url) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const response = await page.goto(String(url));
      const headers = response?.headers() ?? {};
      expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(headers["content-security-policy"]).toContain("default-src 'none'");
      expect(headers["x-frame-options"]).toBe("DENY");
      expect(await page.content()).not.toMatch(/(src|href)="https?:/);
      await context.close();
      throw new Error("looked");
    }).catch(() => undefined);
  });

  it("a service that quotes the key back while it is checked: the page says why, never the key", async () => {
    const sandboxUrl = /the embedded sandbox at (http:\/\/\S+)/.exec(cli.stdout())?.[1] ?? "";
    const fault = await fetch(`${sandboxUrl}/sandbox/faults`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({
        route: "GET /api/generate/models",
        fault: { status: 500, code: "INTERNAL_ERROR", echoKey: true },
        times: 8,
      }),
    });
    expect(fault.status).toBe(201);
    const provider = new MemoryOAuthProvider(callback.url, "Echo Host");
    const outcome = await connectWithOAuth(mcpUrl, provider, async (url) => {
      const page = await openSignIn(browser, url);
      await page.fill("#key", KEY);
      await page.click('button[value="allow"]');
      const html = await page.content();
      seen.push(html);
      expect(html).toContain("The service could not check the key just now (INTERNAL_ERROR)");
      await page.context().close();
      throw new Error("refused");
    }).catch((e: Error) => e.message);
    expect(outcome).toBe("refused");
  });

  it("the key is in no byte of the store, stdout, stderr, page or response", () => {
    keyNowhere();
  });
});
