/**
 * Real hosts' OAuth, replayed against `--auth oauth`: their registrations as they send them
 * (claude.ai, ChatGPT, VS Code, Claude Code, Cursor; sources in /work/shared/NOTES.md, fourth
 * round), an https server serving their Client ID Metadata Documents (self-signed, trusted by the
 * CLI through NODE_EXTRA_CA_CERTS; a document's `client_id` must be its URL, so the one field
 * that differs from the host's live document is its address), a sign-in in Chromium that captures
 * where the browser is sent back (a host's real callback is never reached: https ones are
 * answered by the browser's own route, an app's scheme is read from the redirect), the token
 * exchange, and reads of the token store.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Browser, BrowserContext } from "playwright-core";
import { type FetchLike, postForm } from "./oauth-flow.js";

export const CLAUDE_CALLBACK = "https://claude.ai/api/mcp/auth_callback";
export const CHATGPT_CALLBACK = "https://chatgpt.com/connector/oauth/c0nnect0r-1d";
export const CURSOR_CALLBACK = "cursor://anysphere.cursor-mcp/oauth/callback";

/** claude.ai's document (https://claude.ai/oauth/mcp-oauth-client-metadata), field for field but its URL. */
export const claudeDocument = (url: string) => ({
  client_id: url,
  client_name: "Claude",
  client_uri: "https://claude.ai",
  redirect_uris: [CLAUDE_CALLBACK, "https://claude.com/api/mcp/auth_callback"],
  grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
});

/** Claude Code's document (https://claude.ai/oauth/claude-code-client-metadata): loopback on any port. */
export const claudeCodeDocument = (url: string) => ({
  client_id: url,
  client_name: "Claude Code",
  client_uri: "https://claude.ai",
  redirect_uris: ["http://localhost/callback", "http://127.0.0.1/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
});

/** ChatGPT's per-connector document (https://chatgpt.com/oauth/<id>/client.json). */
export const chatgptDocument = (url: string) => ({
  client_id: url,
  client_name: "ChatGPT",
  redirect_uris: [CHATGPT_CALLBACK],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
});

/** claude.ai's dynamic registration, when it cannot use its document: a confidential client. */
export const CLAUDE_REGISTRATION = {
  client_name: "claudeai",
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "client_secret_post",
  scope: "claudeai",
  redirect_uris: [CLAUDE_CALLBACK],
};

/**
 * VS Code's registration (fetchDynamicRegistration, in
 * https://github.com/microsoft/vscode/blob/main/src/vs/base/common/oauth.ts).
 */
export const VSCODE_REGISTRATION = {
  client_name: "Visual Studio Code",
  client_uri: "https://code.visualstudio.com",
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  redirect_uris: [
    "https://insiders.vscode.dev/redirect",
    "https://vscode.dev/redirect",
    "http://localhost",
    "http://127.0.0.1",
    "http://localhost:33418",
    "http://127.0.0.1:33418",
  ],
  scope: "mcp",
  token_endpoint_auth_method: "none",
  application_type: "native",
};

/** Cursor's registration: a `web` client with its own scheme. */
export const CURSOR_REGISTRATION = {
  client_name: "Cursor",
  redirect_uris: [CURSOR_CALLBACK],
  application_type: "web",
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};

/** A PKCE verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** POSTs a registration (RFC 7591); `from` sets X-Forwarded-For (believed only from a trusted proxy). */
export async function register(
  issuer: string,
  body: unknown,
  from?: string,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${issuer}/oauth/register`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(from === undefined ? {} : { "x-forwarded-for": from }),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? {} : JSON.parse(text), headers: res.headers };
}

/** The authorization URL a host opens: PKCE S256, a state, the resource; `scope` only when given. */
export function authorizationUrl(
  issuer: string,
  p: { clientId: string; redirectUri: string; challenge: string; scope?: string; resource?: string },
): string {
  return `${issuer}/oauth/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: p.clientId,
    redirect_uri: p.redirectUri,
    code_challenge: p.challenge,
    code_challenge_method: "S256",
    state: randomBytes(8).toString("hex"),
    ...(p.scope === undefined ? {} : { scope: p.scope }),
    ...(p.resource === undefined ? {} : { resource: p.resource }),
  })}`;
}

/**
 * Opens `url` in a fresh context, signs in with `key` (or presses `action`), and resolves with the
 * query the browser was sent back with, to a redirect starting with `redirectPrefix`. An http(s)
 * redirect is answered by the browser's route (the host's real callback is never reached); an
 * app's scheme is read from the redirect's Location.
 */
export async function signInCapturing(
  browser: Browser,
  url: string,
  redirectPrefix: string,
  o: {
    key?: string;
    action?: "allow" | "deny" | "sandbox";
    viewport?: { width: number; height: number };
  } = {},
): Promise<URLSearchParams> {
  const context = await browser.newContext(o.viewport === undefined ? {} : { viewport: o.viewport });
  try {
    const back = capture(context, redirectPrefix);
    const page = await context.newPage();
    await page.goto(url);
    if (o.key !== undefined) await page.fill("#key", o.key);
    await page.click(`button[value="${o.action ?? "allow"}"]`);
    return new URL(await back).searchParams;
  } finally {
    await context.close();
  }
}

function capture(context: BrowserContext, prefix: string): Promise<string> {
  return new Promise((resolve) => {
    if (prefix.startsWith("http")) {
      void context.route(
        (u) => u.href.startsWith(prefix),
        async (route) => {
          resolve(route.request().url());
          await route.fulfill({ status: 200, contentType: "text/plain", body: "host callback" });
        },
      );
    }
    context.on("response", (response) => {
      const location = response.headers().location;
      if (location?.startsWith(prefix)) resolve(location);
    });
  });
}

/** Exchanges a code at the token endpoint, as a public client (or with `secret`, client_secret_post). */
export function exchangeCode(
  issuer: string,
  p: {
    clientId: string;
    code: string;
    redirectUri: string;
    verifier: string;
    secret?: string;
    resource?: string;
  },
  fetchFn?: FetchLike,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return postForm(
    `${issuer}/oauth/token`,
    {
      grant_type: "authorization_code",
      client_id: p.clientId,
      code: p.code,
      redirect_uri: p.redirectUri,
      code_verifier: p.verifier,
      ...(p.secret === undefined ? {} : { client_secret: p.secret }),
      ...(p.resource === undefined ? {} : { resource: p.resource }),
    },
    fetchFn,
  );
}

/**
 * A whole sign-in as a host makes it: the authorization request (PKCE, and `scope` when given),
 * the user in Chromium with the sandbox's key, and the code exchanged. What came back to the
 * redirect, and the token response.
 */
export async function signInAndExchange(
  browser: Browser,
  issuer: string,
  p: {
    clientId: string;
    redirectUri: string;
    scope?: string;
    secret?: string;
    resource?: string;
    key?: string;
  },
  viewport?: { width: number; height: number },
): Promise<{ back: URLSearchParams; status: number; tokens: Record<string, unknown> }> {
  const { verifier, challenge } = pkce();
  const url = authorizationUrl(issuer, { ...p, challenge });
  const back = await signInCapturing(browser, url, p.redirectUri, {
    ...(p.key === undefined ? { action: "sandbox" as const } : { key: p.key }),
    ...(viewport === undefined ? {} : { viewport }),
  });
  const res = await exchangeCode(issuer, { ...p, code: back.get("code") ?? "", verifier });
  return { back, status: res.status, tokens: res.body };
}
