/**
 * Staying signed in, and only what is enforced, through the built CLI in `--auth oauth --sandbox`
 * over loopback with the sign-in in Debian's Chromium: two refreshes raced with one refresh token
 * (parallel workers) and a refresh retried after a lost answer both succeed within the grace,
 * every token they gave working (oauth-flow.test.ts shows a reuse after the grace ending the
 * family); revoking an access token ends that token only, revoking the refresh token ends the
 * sign-in, each logged with its reason; DPoP neither advertised nor issued; no endpoint answers
 * without the server's own security headers, and no stock page is served; the lifetimes are the
 * settings given, and a sign-in in use is kept alive.
 */
import { generateKeyPairSync, randomUUID, sign } from "node:crypto";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LedgerStore } from "../../src/ledger/store.js";
import { chromiumMissing, hasChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, type Started } from "../helpers/cli.js";
import { initializeStatus, postForm } from "../helpers/oauth-flow.js";
import { register, signInAndExchange } from "../helpers/oauth-hosts.js";
import { type OAuthServer, startOAuthServer, tokenStore } from "../helpers/oauth-server.js";

const REDIRECT = "https://tokens.example/callback";

runnableOrSkipped(chromiumMissing(), "the OAuth token tests (test/e2e/oauth-tokens.test.ts)");

const iso = isolatedEnv();
let server: OAuthServer;
let cli: Started;
let issuer: string;
let mcpUrl: string;
let browser: Browser;
let store: LedgerStore;
let clientId: string;

const works = async (accessToken: unknown) => (await initializeStatus(mcpUrl, String(accessToken))) === 200;
const refresh = (refreshToken: unknown, headers: Record<string, string> = {}) =>
  fetch(`${issuer}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: String(refreshToken),
      client_id: clientId,
    }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

async function signIn(): Promise<Record<string, unknown>> {
  const { status, tokens } = await signInAndExchange(browser, issuer, {
    clientId,
    redirectUri: REDIRECT,
    scope: "mcp",
  });
  expect(status, JSON.stringify(tokens)).toBe(200);
  return tokens;
}

/** A DPoP proof (RFC 9449) for a POST to `htu`, signed with a fresh P-256 key. */
function dpopProof(htu: string): string {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { kty, crv, x, y } = publicKey.export({ format: "jwk" });
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const input = `${part({ typ: "dpop+jwt", alg: "ES256", jwk: { kty, crv, x, y } })}.${part({
    jti: randomUUID(),
    htm: "POST",
    htu,
    iat: Math.floor(Date.now() / 1000),
  })}`;
  return `${input}.${sign("sha256", Buffer.from(input), { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("base64url")}`;
}

beforeAll(async () => {
  if (!hasChromium()) return;
  server = await startOAuthServer(iso, 17, {
    GENERATION_AUTH_ACCESS_TTL: "2h",
    GENERATION_AUTH_REFRESH_TTL: "3d",
    GENERATION_AUTH_IDLE_TTL: "1m",
  });
  ({ cli, issuer, mcpUrl, browser, store } = server);
  const reg = await register(issuer, { client_name: "Token Host", redirect_uris: [REDIRECT] });
  clientId = String(reg.body.client_id);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  iso.cleanup();
});

describe.runIf(hasChromium())("staying signed in", () => {
  it("two refreshes raced with one refresh token both succeed, and every token they give works", async () => {
    const first = await signIn();
    const [a, b] = await Promise.all([refresh(first.refresh_token), refresh(first.refresh_token)]);
    expect([a.status, b.status], JSON.stringify([a.body, b.body])).toEqual([200, 200]);
    expect(a.body.access_token).not.toBe(b.body.access_token);
    for (const token of [first.access_token, a.body.access_token, b.body.access_token])
      expect(await works(token)).toBe(true);
    // Each new refresh token carries on the sign-in.
    for (const next of [a, b]) {
      const again = await refresh(next.body.refresh_token);
      expect(again.status).toBe(200);
      expect(await works(again.body.access_token)).toBe(true);
    }
  });

  it("a refresh retried within the grace (its answer lost) succeeds again; both answers' tokens work", async () => {
    const first = await signIn();
    const lost = await refresh(first.refresh_token);
    const retried = await refresh(first.refresh_token);
    expect([lost.status, retried.status]).toEqual([200, 200]);
    expect(await works(lost.body.access_token)).toBe(true);
    expect(await works(retried.body.access_token)).toBe(true);
    expect((await refresh(lost.body.refresh_token)).status).toBe(200);
    expect((await refresh(retried.body.refresh_token)).status).toBe(200);
  });

  it("revoking an access token ends that token only; revoking the refresh token ends the sign-in; each is logged with its reason", async () => {
    const tokens = await signIn();
    const revoke = (token: unknown) =>
      postForm(`${issuer}/oauth/revoke`, { token: String(token), client_id: clientId });
    expect((await revoke(tokens.access_token)).status).toBe(200);
    expect(await works(tokens.access_token)).toBe(false);
    const next = await refresh(tokens.refresh_token);
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(await works(next.body.access_token)).toBe(true);
    expect(cli.stderr()).toContain(
      `revoked: an access token of client ${clientId}: revoked by the client (RFC 7009)`,
    );

    expect((await revoke(next.body.refresh_token)).status).toBe(200);
    expect(await works(next.body.access_token)).toBe(false);
    expect((await refresh(next.body.refresh_token)).body.error).toBe("invalid_grant");
    expect(cli.stderr()).toContain(
      `revoked: the sign-in of client ${clientId}: its refresh token was revoked by the client (RFC 7009)`,
    );
  });

  it("lifetimes are the settings given, and a sign-in in use is kept alive past its idle lifetime's start", async () => {
    const tokens = await signIn();
    expect(tokens.expires_in).toBe(2 * 60 * 60);
    const tokenStoreOf = tokenStore(store);
    const refreshExpiry = (await tokenStoreOf.expiry("RefreshToken", String(tokens.refresh_token))) ?? 0;
    expect(Math.abs(refreshExpiry - (Date.now() + 3 * 86_400_000))).toBeLessThan(60_000);
    const grantId = String((await tokenStoreOf.payload("AccessToken", String(tokens.access_token)))?.grantId);
    const signedIn = (await tokenStoreOf.expiry("Grant", grantId)) ?? 0;
    expect(Math.abs(signedIn - (Date.now() + 60_000))).toBeLessThan(5_000);
    // A tenth of the idle lifetime later, a request extends the sign-in to the whole lifetime again.
    await new Promise((r) => setTimeout(r, 7_000));
    expect(await works(tokens.access_token)).toBe(true);
    const extended = (await tokenStoreOf.expiry("Grant", grantId)) ?? 0;
    expect(extended - signedIn).toBeGreaterThan(5_000);
  });
});

describe.runIf(hasChromium())("only what is enforced is advertised", () => {
  it("DPoP is neither advertised nor issued: a proof still gets a Bearer token, and /mcp takes Bearer only", async () => {
    const metadata = (await (
      await fetch(`${issuer}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(metadata.dpop_signing_alg_values_supported).toBeUndefined();
    const tokens = await signIn();
    const proved = await refresh(tokens.refresh_token, { dpop: dpopProof(`${issuer}/oauth/token`) });
    expect(proved.status, JSON.stringify(proved.body)).toBe(200);
    expect(proved.body.token_type).toBe("Bearer");
    expect(await works(proved.body.access_token)).toBe(true);
    const asDpop = await fetch(mcpUrl, {
      method: "POST",
      headers: {
        authorization: `DPoP ${String(proved.body.access_token)}`,
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(asDpop.status).toBe(401);
  });

  it("the metadata names no ID token, claim, subject or openid, and the resource never offers offline_access", async () => {
    const as = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(as.scopes_supported).toEqual(["offline_access", "mcp"]);
    for (const field of [
      "id_token_signing_alg_values_supported",
      "claims_supported",
      "subject_types_supported",
      "jwks_uri",
      "end_session_endpoint",
      "pushed_authorization_request_endpoint",
      "userinfo_endpoint",
    ]) {
      expect(as[field], field).toBeUndefined();
    }
    expect(as.response_modes_supported).toEqual(["query"]);
    expect(as.token_endpoint_auth_methods_supported).toEqual([
      "none",
      "client_secret_basic",
      "client_secret_post",
    ]);
    const prm = (await (await fetch(`${issuer}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<
      string,
      unknown
    >;
    expect(prm.scopes_supported).toEqual(["mcp"]);
    const challenge =
      (await fetch(mcpUrl, { method: "POST", body: "{}" })).headers.get("www-authenticate") ?? "";
    expect(challenge).not.toContain("offline_access");
  });

  it("no endpoint answers without the server's security headers, and no stock page is served", async () => {
    const requests: Array<[string, RequestInit, number]> = [
      ["/oauth/authorize", {}, 400],
      [
        `/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: "code", redirect_uri: REDIRECT, response_mode: "form_post", code_challenge: "x".repeat(43), code_challenge_method: "S256" })}`,
        {},
        400,
      ],
      ["/oauth/logout", {}, 404],
      ["/oauth/par", { method: "POST" }, 404],
      ["/oauth/userinfo", {}, 404],
      ["/oauth/nothing-here", {}, 404],
      ["/oauth/token", { method: "POST" }, 400],
      [
        "/oauth/register",
        { method: "POST", headers: { "content-type": "application/json" }, body: "[]" },
        400,
      ],
      ["/oauth/jwks", {}, 200],
      ["/.well-known/oauth-authorization-server", {}, 200],
      ["/oauth/sign-in/unknown", {}, 400],
    ];
    for (const [path, init, status] of requests) {
      const res = await fetch(`${issuer}${path}`, {
        redirect: "manual",
        ...init,
        headers: { accept: "text/html", ...(init.headers as object) },
      });
      const body = await res.text();
      expect(res.status, path).toBe(status);
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(res.headers.get("content-security-policy"), path).toMatch(
        /default-src 'none';.*frame-ancestors 'none'/,
      );
      expect(body, path).not.toMatch(/<script|Submitting Callback|<form[^>]*logout/i);
      if (body.startsWith("<!doctype html>")) expect(body, path).toMatch(/Could not connect|Connect an app/);
    }
  });

  it("oidc-provider says nothing that reads like a misconfiguration", () => {
    for (const text of [cli.stdout(), cli.stderr()])
      expect(text).not.toMatch(/oidc-provider (NOTICE|WARNING)/);
  });
});
