import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LedgerStore } from "../../src/ledger/store.js";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { chromiumMissing, hasChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, type Started } from "../helpers/cli.js";
import { connectWithTokens, initializeStatus, MemoryOAuthProvider } from "../helpers/oauth-flow.js";
import {
  authorizationUrl,
  CHATGPT_CALLBACK,
  CLAUDE_CALLBACK,
  CLAUDE_REGISTRATION,
  CURSOR_CALLBACK,
  CURSOR_REGISTRATION,
  chatgptDocument,
  claudeCodeDocument,
  claudeDocument,
  exchangeCode,
  pkce,
  register,
  signInAndExchange,
  VSCODE_REGISTRATION,
} from "../helpers/oauth-hosts.js";
import {
  type DocumentHost,
  type OAuthServer,
  startOAuthServer,
  tokenStore,
} from "../helpers/oauth-server.js";

const KEY = SANDBOX_API_KEY;
const DAY_S = 24 * 60 * 60;

runnableOrSkipped(chromiumMissing(), "the OAuth host sign-in tests (test/e2e/oauth-hosts.test.ts)");

const iso = isolatedEnv();
let server: OAuthServer;
let cli: Started;
let issuer: string;
let mcpUrl: string;
let browser: Browser;
let store: LedgerStore;
let documents: DocumentHost;
/** Every code, token and client secret handed out, looked for in the log at the end. */
const secrets: string[] = [];

/** Signs in as the user (with the sandbox's key typed), checks the token on /mcp; the token response. */
async function completes(
  p: { clientId: string; redirectUri: string; scope?: string; secret?: string },
  viewport?: { width: number; height: number },
): Promise<Record<string, unknown>> {
  const { back, status, tokens } = await signInAndExchange(
    browser,
    issuer,
    { ...p, key: KEY, resource: mcpUrl },
    viewport,
  );
  expect(back.get("error"), back.get("error_description") ?? "").toBeNull();
  // SEP-2468: the issuer is in every authorization response.
  expect(back.get("iss")).toBe(issuer);
  secrets.push(back.get("code") ?? "");
  expect(status, JSON.stringify(tokens)).toBe(200);
  secrets.push(String(tokens.access_token), String(tokens.refresh_token));
  expect(tokens.token_type).toBe("Bearer");
  expect(await initializeStatus(mcpUrl, String(tokens.access_token))).toBe(200);
  return tokens;
}

beforeAll(async () => {
  if (!hasChromium()) return;
  server = await startOAuthServer(iso, 11);
  ({ cli, issuer, mcpUrl, browser, store, documents } = server);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  iso.cleanup();
});

describe.runIf(hasChromium())("each host's real registration signs in through the built CLI", () => {
  it("claude.ai by its Client ID Metadata Document (its jwt-bearer grant type ignored), never stored as a client", async () => {
    const clientId = documents.serve("/oauth/mcp-oauth-client-metadata", claudeDocument);
    // Claude appends offline_access when the server's metadata lists it.
    const tokens = await completes({ clientId, redirectUri: CLAUDE_CALLBACK, scope: "mcp offline_access" });
    // Long-lived by default: claude.ai often never refreshes (docs/oauth.md, "Lifetimes").
    expect(tokens.expires_in).toBe(30 * DAY_S);
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(tokens.scope).toBe("mcp");
    expect(await tokenStore(store).expiry("Client", clientId)).toBeUndefined();
  });

  it("claude.ai by dynamic registration: a confidential client whose secret the store keeps only as a hash", async () => {
    const reg = await register(issuer, CLAUDE_REGISTRATION);
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const clientId = String(reg.body.client_id);
    const secret = String(reg.body.client_secret);
    secrets.push(secret);
    // Its `scope: "claudeai"` is not this server's: dropped, not refused.
    expect(reg.body.scope).toBeUndefined();
    const tokens = await completes({ clientId, redirectUri: CLAUDE_CALLBACK, secret });
    expect(server.storeBytes().includes(secret)).toBe(false);
    const refresh = (client_secret: string) =>
      fetch(`${issuer}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: String(tokens.refresh_token),
          client_id: clientId,
          client_secret,
        }),
      });
    const wrong = await refresh(`${secret.slice(0, -2)}xx`);
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: string }).error).toBe("invalid_client");
    const right = await refresh(secret);
    expect(right.status).toBe(200);
    secrets.push(String(((await right.json()) as { access_token: string }).access_token));
  });

  it("ChatGPT by its per-connector document, returning to chatgpt.com/connector/oauth/<id>", async () => {
    const clientId = documents.serve("/oauth/c0nnect0r-1d/client.json", chatgptDocument);
    await completes({ clientId, redirectUri: CHATGPT_CALLBACK, scope: "mcp" });
  });

  it("VS Code: native, on a random loopback port and on https://vscode.dev/redirect", async () => {
    const reg = await register(issuer, VSCODE_REGISTRATION);
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const clientId = String(reg.body.client_id);
    const randomPort = 40_000 + Math.floor(Math.random() * 20_000);
    await completes({ clientId, redirectUri: `http://127.0.0.1:${randomPort}/`, scope: "mcp" });
    await completes({ clientId, redirectUri: "https://vscode.dev/redirect", scope: "mcp" });
  });

  it("Claude Code by its document: http://localhost on whatever port it listens", async () => {
    const clientId = documents.serve("/oauth/claude-code-client-metadata", claudeCodeDocument);
    await completes({ clientId, redirectUri: "http://localhost:54873/callback", scope: "mcp" });
  });

  it("Cursor: a web registration with cursor://, whose code arrives by the app's scheme", async () => {
    const reg = await register(issuer, CURSOR_REGISTRATION);
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    expect(reg.body.redirect_uris).toEqual([CURSOR_CALLBACK]);
    const tokens = await completes({ clientId: String(reg.body.client_id), redirectUri: CURSOR_CALLBACK });
    const provider = new MemoryOAuthProvider(CURSOR_CALLBACK, "Cursor");
    provider.saveTokens({ access_token: String(tokens.access_token), token_type: "Bearer" });
    const client = await connectWithTokens(mcpUrl, provider);
    expect((await client.callTool({ name: "list_models", arguments: {} })).isError).toBeFalsy();
    await client.close();
  });
});

describe.runIf(hasChromium())("sign-ins hosts do not expect to fail", () => {
  let clientId: string;
  const redirectUri = "http://127.0.0.1:45711/cb";

  beforeAll(async () => {
    if (!hasChromium()) return;
    const reg = await register(issuer, { client_name: "Scopeless", redirect_uris: [redirectUri] });
    clientId = String(reg.body.client_id);
  });

  it("no scope, or offline_access alone, is granted the server's scope (the conformance client sends none)", async () => {
    const none = await completes({ clientId, redirectUri });
    expect(none.scope).toBe("mcp");
    const offline = await completes({ clientId, redirectUri, scope: "offline_access" });
    expect(offline.scope).toBe("mcp");
    expect(offline.refresh_token).toEqual(expect.any(String));
  });

  it("a callback that redirects on to another origin (a bounce to a desktop app) completes in Chromium", async () => {
    const arrived: string[] = [];
    const app = await listen(
      createServer((req, res) => {
        arrived.push(req.url ?? "");
        res.end("app");
      }),
    );
    const bounce = await listen(
      createServer((req, res) => {
        const search = new URL(req.url ?? "/", "http://x").search;
        res.writeHead(302, { location: `http://localhost:${app.port}/handoff${search}` }).end();
      }),
    );
    try {
      const callback = `http://127.0.0.1:${bounce.port}/callback`;
      const reg = await register(issuer, { client_name: "Bouncer", redirect_uris: [callback] });
      const { verifier, challenge } = pkce();
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(
        authorizationUrl(issuer, { clientId: String(reg.body.client_id), redirectUri: callback, challenge }),
      );
      await page.fill("#key", KEY);
      await page.click('button[value="allow"]');
      await page.waitForURL(/\/handoff\?/, { timeout: 10_000 });
      await context.close();
      const code = new URL(arrived[0] ?? "", "http://x").searchParams.get("code") ?? "";
      const tokens = await exchangeCode(issuer, {
        clientId: String(reg.body.client_id),
        code,
        redirectUri: callback,
        verifier,
      });
      expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
      secrets.push(code, String(tokens.body.access_token));
    } finally {
      await Promise.all([app.close(), bounce.close()]);
    }
  });

  it("a client_name at its limit leaves 'returns to' in view on a phone and a desktop; a longer one is refused", async () => {
    const long = await register(issuer, { client_name: "A".repeat(40_000), redirect_uris: [redirectUri] });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ error: "invalid_client_metadata" });
    expect(String(long.body.error_description)).toMatch(/^client_name: 40000 characters; at most 100$/);
    const name = `${"Very".repeat(20)} Long Name Of Twenty`.slice(0, 100);
    const reg = await register(issuer, { client_name: name, redirect_uris: [redirectUri] });
    expect(reg.status).toBe(201);
    for (const viewport of [
      { width: 375, height: 667 },
      { width: 1280, height: 800 },
    ]) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      const { challenge } = pkce();
      await page.goto(
        authorizationUrl(issuer, { clientId: String(reg.body.client_id), redirectUri, challenge }),
      );
      const box = await page.locator("#returns-to").boundingBox();
      expect(box, JSON.stringify(viewport)).not.toBeNull();
      expect((box?.y ?? 0) + (box?.height ?? 0), JSON.stringify(viewport)).toBeLessThanOrEqual(
        viewport.height,
      );
      expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
      expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(viewport.width);
      expect(await page.locator("#returns-to").innerText()).toContain("127.0.0.1:45711");
      await context.close();
    }
  });

  it("a key the service refuses is logged by its code only", async () => {
    const { challenge } = pkce();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(authorizationUrl(issuer, { clientId, redirectUri, challenge }));
    await page.fill("#key", `lgk_${"0e".repeat(32)}`);
    await page.click('button[value="allow"]');
    expect(await page.content()).toContain("The service did not accept this key");
    await context.close();
    expect(cli.stderr()).toContain(
      `sign-in refused for client ${clientId}: the service answered INVALID_API_KEY`,
    );
  });

  it("the operator's log: a source's first registration, every sign-in, never a key, token, code or secret", () => {
    const err = cli.stderr();
    // Every registration here comes from 127.0.0.1: the first is said, the rest counted in one
    // line a minute (src/transports/oauth/oauth-log.ts), so a flood is not a line per client.
    expect(err).toMatch(/oauth: client registered: \S+ "[^"]*", returning to \S+/);
    const said = err.match(/oauth: client registered: /g) ?? [];
    const summaries =
      err.match(/oauth: \d+ more clients? registered from 127\.0\.0\.1 in the last minute/g) ?? [];
    expect(said.length).toBeLessThanOrEqual(summaries.length + 1);
    expect(err).toMatch(
      /oauth: sign-in: client https:\/\/localhost:\d+\/oauth\/mcp-oauth-client-metadata connected to account [0-9a-f]{12}\n/,
    );
    for (const text of [err, cli.stdout()]) {
      expect(text).not.toMatch(/oidc-provider (NOTICE|WARNING)/);
      expect(text.includes(KEY.slice(4, 24))).toBe(false);
      for (const secret of secrets) expect(text.includes(secret), secret.slice(0, 6)).toBe(false);
    }
    expect(secrets.length).toBeGreaterThan(20);
  });
});

async function listen(server: Server): Promise<{ port: number; close(): Promise<void> }> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
