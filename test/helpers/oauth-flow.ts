/**
 * The parts of an OAuth host, real ones, for tests of `--auth oauth`: the SDK client's OAuth
 * support driven by an in-memory OAuthClientProvider, a redirect URI that records what the browser
 * brings back, a self-signed certificate (made by openssl) for the https servers of the tests,
 * Debian's Chromium for the sign-in page, and raw token-endpoint calls. oauth-hosts.ts holds the
 * real hosts' registrations and the server of Client ID Metadata Documents.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import {
  Client,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import type { Browser, Page } from "playwright-core";
import { initializeRequest } from "./cli.js";

export interface Tls {
  cert: string;
  key: string;
  certPath: string;
  /** Certificate and key in one file, as HAProxy's `crt` wants them. */
  pemPath: string;
}

/** A self-signed certificate for localhost and 127.0.0.1, valid one day. */
export function selfSignedCert(dir: string): Tls {
  const certPath = join(dir, "cert.pem");
  const keyPath = join(dir, "key.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      keyPath,
      "-out",
      certPath,
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  const cert = readFileSync(certPath, "utf8");
  const key = readFileSync(keyPath, "utf8");
  const pemPath = join(dir, "both.pem");
  execFileSync("sh", ["-c", `cat "${certPath}" "${keyPath}" > "${pemPath}"`]);
  return { cert, key, certPath, pemPath };
}

const listen = (server: Server): Promise<number> =>
  new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );

/** A host's redirect URI as startCallback serves it. */
export type Callback = Awaited<ReturnType<typeof startCallback>>;

/** The host's redirect URI: records the query of each visit (code, state, error). */
export async function startCallback(): Promise<{
  url: string;
  next(): Promise<URLSearchParams>;
  close(): Promise<void>;
}> {
  const waiting: Array<(q: URLSearchParams) => void> = [];
  const arrived: URLSearchParams[] = [];
  const server = createServer((req, res) => {
    const at = new URL(req.url ?? "/", "http://x");
    // Browsers also ask for /favicon.ico: only the redirect URI's own visits count.
    if (at.pathname !== "/callback") return void res.writeHead(404).end();
    const q = at.searchParams;
    const w = waiting.shift();
    if (w === undefined) arrived.push(q);
    else w(q);
    res.writeHead(200, { "content-type": "text/plain" }).end("You may close this window.");
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next: () => {
      const q = arrived.shift();
      return q === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(q);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A host's OAuth state, in memory: what the SDK client asks an OAuthClientProvider for. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  /** Set for a host that registers by Client ID Metadata Document. */
  clientMetadataUrl?: string;
  #verifier = "";

  constructor(
    private readonly redirect: string,
    private readonly name: string,
    clientMetadataUrl?: string,
  ) {
    if (clientMetadataUrl !== undefined) this.clientMetadataUrl = clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  clientInformation() {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }
}

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * Connects as a host does: the first attempt meets 401 and discovery, registration and the
 * authorization request follow (the SDK's own); `authorize` plays the user in the browser and
 * returns what reached the redirect URI; then the code is exchanged and the client connects with its token.
 */
export async function connectWithOAuth(
  mcpUrl: string,
  provider: MemoryOAuthProvider,
  authorize: (authorizationUrl: URL) => Promise<URLSearchParams>,
  fetchFn?: FetchLike,
): Promise<Client> {
  const options = { authProvider: provider, ...(fetchFn === undefined ? {} : { fetch: fetchFn }) };
  const first = new StreamableHTTPClientTransport(new URL(mcpUrl), options);
  const refused = await new Client({ name: "oauth-host", version: "1.0.0" }).connect(first).then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(refused instanceof UnauthorizedError))
    throw new Error(`expected UnauthorizedError, got ${String(refused)}`);
  if (provider.authorizationUrl === undefined) throw new Error("the SDK asked for no authorization");
  // What the browser brought back to the redirect URI: the code and the issuer (RFC 9207).
  const back = await authorize(provider.authorizationUrl);
  await first.finishAuth(back.get("code") ?? "", back.get("iss") ?? undefined);
  return connectWithTokens(mcpUrl, provider, fetchFn);
}

/** Connects with the tokens the provider holds (no sign-in). */
export async function connectWithTokens(
  mcpUrl: string,
  provider: MemoryOAuthProvider,
  fetchFn?: FetchLike,
): Promise<Client> {
  const options = { authProvider: provider, ...(fetchFn === undefined ? {} : { fetch: fetchFn }) };
  const client = new Client({ name: "oauth-host", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), options));
  return client;
}

/** Opens an authorization URL in a fresh browser context; resolves on the sign-in page. */
export async function openSignIn(
  browser: Browser,
  url: URL | string,
  ignoreHTTPSErrors = false,
): Promise<Page> {
  const context = await browser.newContext({ ignoreHTTPSErrors });
  const page = await context.newPage();
  await page.goto(String(url));
  return page;
}

/** Plays the user on the sign-in page: types `key` (or uses a button) and waits for the redirect. */
export async function approve(
  page: Page,
  callback: { next(): Promise<URLSearchParams> },
  o: { key?: string; action?: "allow" | "deny" | "sandbox" },
): Promise<URLSearchParams> {
  if (o.key !== undefined) await page.fill("#key", o.key);
  const back = callback.next();
  await page.click(`button[value="${o.action ?? "allow"}"]`);
  const params = await back;
  await page.context().close();
  return params;
}

/** A host's first request, initialize, with a bearer token: 200 when the token is good, 401 otherwise. */
export async function initializeStatus(
  url: string,
  token: string,
  fetchFn: FetchLike = fetch,
): Promise<number> {
  const res = await fetchFn(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify(initializeRequest()),
  });
  await res.text();
  return res.status;
}

/** POSTs a form to an OAuth endpoint; the status and parsed JSON body. */
export async function postForm(
  url: string,
  form: Record<string, string>,
  fetchFn: FetchLike = fetch,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetchFn(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
}
