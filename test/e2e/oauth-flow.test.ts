/**
 * `--auth oauth --sandbox` through the built CLI over loopback, as claude.ai or ChatGPT meet it:
 * discovery from a bare 401, a host registered by Client ID Metadata Document (served over https
 * by a self-signed test host the CLI trusts through NODE_EXTRA_CA_CERTS) and one by dynamic
 * registration, both driven by the SDK client's own OAuth support; the user signs in on the
 * server's page in Debian's Chromium; then list_models and a paid generate_image under the token,
 * a refresh, and revocation ending access. Then every refusal the authorization server owes, each
 * a clear OAuth error with nothing stored, and the key in no byte of the store, stdout, stderr, a
 * page or a response.
 */
import { createHash } from "node:crypto";
import type { Client } from "@modelcontextprotocol/client";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LedgerStore } from "../../src/ledger/store.js";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { chromiumMissing, hasChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, type Started } from "../helpers/cli.js";
import {
  approve,
  connectWithOAuth,
  connectWithTokens,
  type FetchLike,
  initializeStatus,
  MemoryOAuthProvider,
  openSignIn,
  postForm,
  startCallback,
} from "../helpers/oauth-flow.js";
import { register } from "../helpers/oauth-hosts.js";
import {
  type DocumentHost,
  type OAuthServer,
  startOAuthServer,
  tokenStore,
} from "../helpers/oauth-server.js";

const KEY = SANDBOX_API_KEY;
const HEX = KEY.slice(4);

runnableOrSkipped(chromiumMissing(), "the OAuth sign-in tests (test/e2e/oauth-flow.test.ts)");

const iso = isolatedEnv();
let server: OAuthServer;
let cli: Started;
let issuer: string;
let mcpUrl: string;
let browser: Browser;
let callback: Awaited<ReturnType<typeof startCallback>>;
let documents: DocumentHost;
let cimdUrl: string;
let store: LedgerStore;
/** Every page and response body a user or host saw, searched for the key at the end. */
const seen: string[] = [];

/** Rows of the token store whose key starts with `oauth:<prefix>`. */
const rows = async (prefix: string): Promise<number> => (await tokenStore(store).size(prefix)).rows;

/** fetch without following redirects, keeping each response body for the search at the end. */
const seenFetch: FetchLike = async (url, init) => {
  const res = await fetch(url, { redirect: "manual", ...init });
  seen.push(await res.clone().text());
  return res;
};
const raw = (path: string, init?: RequestInit): Promise<Response> => seenFetch(`${issuer}${path}`, init);
const mcpStatus = (token: string): Promise<number> => initializeStatus(`${issuer}/mcp`, token, seenFetch);

/** Signs in a DCR host with the sandbox key typed; its provider holds the tokens. */
async function dcrSignIn(name: string): Promise<{ provider: MemoryOAuthProvider; client: Client }> {
  const provider = new MemoryOAuthProvider(callback.url, name);
  const client = await connectWithOAuth(mcpUrl, provider, async (url) => {
    const page = await openSignIn(browser, url);
    seen.push(await page.content());
    return approve(page, callback, { key: KEY });
  });
  return { provider, client };
}

beforeAll(async () => {
  if (!hasChromium()) return;
  // A short grace, so a reuse after it is reached within the test (oauth-tokens.test.ts tests the grace).
  server = await startOAuthServer(iso, 7, { GENERATION_AUTH_REFRESH_GRACE: "1s" });
  ({ cli, issuer, mcpUrl, browser, store, documents } = server);
  callback = await startCallback();
  cimdUrl = documents.serve("/client.json", (clientId) => ({
    client_id: clientId,
    client_name: "CIMD Test Host",
    redirect_uris: [callback.url],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  }));
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await callback?.close();
  iso.cleanup();
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
});

describe.runIf(hasChromium())("--auth oauth refusals: a clear OAuth error, nothing stored", () => {
  let dcr: { client_id: string };
  const authorize = (params: Record<string, string>) =>
    raw(`/oauth/authorize?${new URLSearchParams({ response_type: "code", scope: "mcp", ...params })}`);
  const pkce = {
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
  };

  beforeAll(async () => {
    if (!hasChromium()) return;
    const reg = await postForm(`${issuer}/oauth/register`, {});
    expect(reg.status).toBe(400);
    const res = await raw("/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        redirect_uris: [callback.url],
        client_name: "Refusal Host",
        token_endpoint_auth_method: "none",
      }),
    });
    expect(res.status).toBe(201);
    dcr = (await res.json()) as { client_id: string };
  });

  it("a redirect_uri not registered: an error page, no redirect, no interaction stored", async () => {
    const interactions = await rows("Interaction");
    const res = await authorize({
      client_id: dcr.client_id,
      redirect_uri: "http://127.0.0.1:9/evil",
      ...pkce,
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(await res.text()).toContain("redirect_uri did not match");
    expect(await rows("Interaction")).toBe(interactions);
  });

  it("PKCE missing or plain: invalid_request back to the client, no interaction stored", async () => {
    const interactions = await rows("Interaction");
    for (const extra of [{}, { code_challenge: "x".repeat(43), code_challenge_method: "plain" }]) {
      const res = await authorize({ client_id: dcr.client_id, redirect_uri: callback.url, ...extra });
      expect(res.status).toBe(303);
      const back = new URL(res.headers.get("location") ?? "").searchParams;
      expect(back.get("error")).toBe("invalid_request");
      expect(back.get("error_description")).toMatch(/PKCE|code_challenge/);
    }
    expect(await rows("Interaction")).toBe(interactions);
  });

  it("a token for another resource: invalid_target", async () => {
    const res = await authorize({
      client_id: dcr.client_id,
      redirect_uri: callback.url,
      resource: "https://other.example/mcp",
      ...pkce,
    });
    const back = new URL(res.headers.get("location") ?? "").searchParams;
    expect(back.get("error")).toBe("invalid_target");
  });

  it("a CIMD client_id on a private address is refused before any fetch", async () => {
    for (const id of ["https://10.1.2.3/client.json", "https://169.254.169.254/latest/meta-data"]) {
      const res = await authorize({ client_id: id, redirect_uri: callback.url, ...pkce });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain("invalid_client");
      expect(text).toContain("private, loopback or reserved address");
    }
  });

  it("an authorization code used twice: invalid_grant, and the tokens it gave are revoked", async () => {
    const { provider, client } = await dcrSignIn("Code Reuse Host");
    await client.close();
    // Sign in again by hand to hold the code itself.
    const verifier = "a".repeat(64);
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const clientId = String(provider.info?.client_id);
    const url = `${issuer}/oauth/authorize?${new URLSearchParams({
      response_type: "code",
      scope: "mcp",
      client_id: clientId,
      redirect_uri: callback.url,
      resource: mcpUrl,
      code_challenge: challenge,
      code_challenge_method: "S256",
    })}`;
    const code = (await approve(await openSignIn(browser, url), callback, { key: KEY })).get("code") ?? "";
    const exchange = {
      grant_type: "authorization_code",
      code,
      redirect_uri: callback.url,
      client_id: clientId,
      code_verifier: verifier,
    };
    const first = await postForm(`${issuer}/oauth/token`, exchange);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(await mcpStatus(String(first.body.access_token))).toBe(200);
    const second = await postForm(`${issuer}/oauth/token`, exchange);
    expect(second.body.error).toBe("invalid_grant");
    expect(await mcpStatus(String(first.body.access_token))).toBe(401);
    expect(cli.stderr()).toContain(
      `revoked: the sign-in of client ${clientId}: an authorization code was used twice`,
    );
  });

  it("a refresh token reused after rotation and its grace: invalid_grant, and the whole family is revoked", async () => {
    const { provider, client } = await dcrSignIn("Refresh Reuse Host");
    await client.close();
    const clientId = String(provider.info?.client_id);
    const old = String(provider.saved?.refresh_token);
    const rotated = await postForm(`${issuer}/oauth/token`, {
      grant_type: "refresh_token",
      refresh_token: old,
      client_id: clientId,
    });
    expect(rotated.status).toBe(200);
    expect(await mcpStatus(String(rotated.body.access_token))).toBe(200);
    await new Promise((r) => setTimeout(r, 1_200));
    const reused = await postForm(`${issuer}/oauth/token`, {
      grant_type: "refresh_token",
      refresh_token: old,
      client_id: clientId,
    });
    expect(reused.body.error).toBe("invalid_grant");
    expect(await mcpStatus(String(rotated.body.access_token))).toBe(401);
    const next = await postForm(`${issuer}/oauth/token`, {
      grant_type: "refresh_token",
      refresh_token: String(rotated.body.refresh_token),
      client_id: clientId,
    });
    expect(next.body.error).toBe("invalid_grant");
    expect(cli.stderr()).toContain(
      `revoked: the sign-in of client ${clientId}: a refresh token was used again after its grace (reuse detection ends the whole family)`,
    );
  });

  it("a revoked access token answers 401 with a fresh challenge", async () => {
    const { provider, client } = await dcrSignIn("Revoke Host");
    await client.close();
    const token = String(provider.saved?.access_token);
    expect(await mcpStatus(token)).toBe(200);
    await postForm(`${issuer}/oauth/revoke`, { token, client_id: String(provider.info?.client_id) });
    expect(await mcpStatus(token)).toBe(401);
  });

  it("a form posted without its CSRF token, and bad keys, are refused on the page, naming the problem, never the key", async () => {
    const grants = await rows("Grant");
    const accounts = await rows("account");
    const provider = new MemoryOAuthProvider(callback.url, "Careful Host");
    const done = connectWithOAuth(mcpUrl, provider, async (url) => {
      const page = await openSignIn(browser, url);
      // Not a key at all.
      await page.fill("#key", "lgk_not-a-key");
      await page.click('button[value="allow"]');
      let html = await page.content();
      seen.push(html);
      expect(html).toContain("That is not a service key");
      expect(html).not.toContain("not-a-key");
      // A well-formed key the service does not know.
      const unknown = `lgk_${"0f".repeat(32)}`;
      await page.fill("#key", unknown);
      await page.click('button[value="allow"]');
      html = await page.content();
      seen.push(html);
      expect(html).toContain("The service did not accept this key");
      expect(html).not.toContain("0f0f0f0f");
      expect(await page.inputValue("#key")).toBe("");
      // The CSRF token removed: refused, nothing granted.
      await page.evaluate("document.querySelector('input[name=csrf]').remove()");
      await page.fill("#key", KEY);
      await page.click('button[value="allow"]');
      html = await page.content();
      seen.push(html);
      expect(html).toContain("The form expired or did not come from this sign-in page");
      await page.context().close();
      throw new Error("refused");
    }).catch((e: Error) => e.message);
    expect(await done).toBe("refused");
    expect(await rows("Grant")).toBe(grants);
    expect(await rows("account")).toBe(accounts);
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

  it("a request for openid alone gets the server's scope and no ID token (no identifier of the user leaves)", async () => {
    const reg = (await (
      await raw("/oauth/register", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [callback.url], token_endpoint_auth_method: "none" }),
      })
    ).json()) as { client_id: string };
    const verifier = "b".repeat(64);
    const url = `${issuer}/oauth/authorize?${new URLSearchParams({
      response_type: "code",
      scope: "openid",
      client_id: reg.client_id,
      redirect_uri: callback.url,
      resource: mcpUrl,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    })}`;
    const back = await approve(await openSignIn(browser, url), callback, { key: KEY });
    expect(back.get("error"), back.get("error_description") ?? "").toBeNull();
    const tokens = await postForm(`${issuer}/oauth/token`, {
      grant_type: "authorization_code",
      code: back.get("code") ?? "",
      redirect_uri: callback.url,
      client_id: reg.client_id,
      code_verifier: verifier,
    });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect(tokens.body.id_token).toBeUndefined();
    expect(tokens.body.scope).toBe("mcp");
    expect(await mcpStatus(String(tokens.body.access_token))).toBe(200);
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

  it("X-Forwarded-For from a peer not in GENERATION_TRUSTED_PROXIES is not believed: registrations stop at one address's rate", async () => {
    // Every registration of this file came from 127.0.0.1; each of these claims another address.
    let refused: Awaited<ReturnType<typeof register>> | undefined;
    for (let i = 1; i <= 25 && refused === undefined; i++) {
      const reg = await register(issuer, { redirect_uris: [callback.url] }, `198.51.100.${i}`);
      if (reg.status === 429) refused = reg;
      else expect(reg.status).toBe(201);
    }
    expect(refused?.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused?.body).toMatchObject({ error: "too_many_requests" });
    expect(String(refused?.body.error_description)).toContain("at most 20 a minute from one address");
    expect(cli.stderr()).toContain(
      "registration refused for 127.0.0.1: at most 20 a minute from one address; if 127.0.0.1 is your proxy, list it in GENERATION_TRUSTED_PROXIES",
    );
  });

  it("the key is in no byte of the store, stdout, stderr, page or response", async () => {
    const base64 = Buffer.from(KEY).toString("base64").slice(4, 40);
    for (const [label, text] of [
      ["store", server.storeBytes()],
      ["stdout", cli.stdout()],
      ["stderr", cli.stderr()],
      ["pages and responses", seen.join("\n")],
    ] as const) {
      expect(text.toLowerCase().includes(HEX.slice(0, 16)), label).toBe(false);
      expect(text.includes(base64), label).toBe(false);
    }
    expect(seen.length).toBeGreaterThan(10);
  });
});
