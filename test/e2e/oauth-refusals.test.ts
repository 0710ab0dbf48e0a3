/**
 * `--auth oauth --sandbox` through the built CLI over loopback: every refusal the authorization
 * server owes, each a clear OAuth error with nothing stored, and the key in no byte of the store,
 * stdout, stderr, a page or a response (the sign-ins that work: oauth-flow.test.ts).
 */
import { createHash } from "node:crypto";
import type { Browser } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { chromiumMissing, hasChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, type Started } from "../helpers/cli.js";
import {
  approve,
  type Callback,
  connectWithOAuth,
  MemoryOAuthProvider,
  openSignIn,
  postForm,
} from "../helpers/oauth-flow.js";
import { oauthFlowHarness } from "../helpers/oauth-flow-harness.js";
import { register } from "../helpers/oauth-hosts.js";

const KEY = SANDBOX_API_KEY;

runnableOrSkipped(chromiumMissing(), "the OAuth refusal tests (test/e2e/oauth-refusals.test.ts)");

const h = oauthFlowHarness(isolatedEnv());
const { seen, rows, raw, mcpStatus, dcrSignIn, keyNowhere } = h;
let cli: Started;
let issuer: string;
let mcpUrl: string;
let browser: Browser;
let callback: Callback;
beforeAll(() => {
  ({ cli, issuer, mcpUrl, browser, callback } = h.state);
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

  it("the key is in no byte of the store, stdout, stderr, page or response", () => {
    keyNowhere();
  });
});
