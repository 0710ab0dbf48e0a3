/**
 * Streamable HTTP at /mcp, for both protocol eras:
 * - 2025-11-25 (and older 2025 revisions): sessionful, see http-sessions.ts.
 * - 2026-07-28: sessionless; the SDK's createMcpHandler serves each request with a fresh server for
 *   the key of that very request.
 * In front of both: the checks of http-guard.ts. Each exchange is written by http-exchange.ts,
 * which decides delivery. `GET /healthz` tells whether the ledger is usable.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type AuthInfo,
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  type McpServer,
  validateHostHeader,
} from "@modelcontextprotocol/server";
import { Exchanges, type FetchHandler, serveExchange } from "./http-exchange.js";
import {
  admit,
  allowedHostnames,
  chooseKey,
  isLoopbackHost,
  MAX_BODY_BYTES,
  readJson,
  sendJson,
} from "./http-guard.js";
import { type SessionLimits, Sessions } from "./http-sessions.js";
import type { OAuthGate } from "./oauth/oauth-gate.js";

export { isLoopbackHost, MAX_BODY_BYTES, MAX_JSON_DEPTH } from "./http-guard.js";
export { MAX_SESSIONS, MAX_SESSIONS_PER_KEY, SESSION_IDLE_MS, UNPROVEN_IDLE_MS } from "./http-sessions.js";

/** How long a shutdown waits for the calls in flight to write their answers. */
export const SHUTDOWN_GRACE_MS = 1_500;

export interface HttpServerOptions {
  host: string;
  port: number;
  /** GENERATION_API_KEY: the key of sessions that bring none, honoured only when bound to loopback. */
  defaultApiKey?: string;
  /** Registers a key and returns its hash: sessions and records are bound to the hash, never the key. */
  keyHash(apiKey: string): string;
  /** One MCP server for one key (by hash): createMcpServer over that key's engine. */
  createServer(keyHash: string): McpServer | Promise<McpServer>;
  /** Resolves when the ledger is usable, rejects otherwise (GET /healthz). */
  health?(): Promise<void>;
  onError?(error: Error): void;
  /** Session caps and idle times (tests shorten them). */
  sessions?: Partial<SessionLimits>;
  /**
   * --auth oauth: the OAuth routes, and the access token (never a service key) as the credential
   * of /mcp; a session's key is then the one behind the token's grant.
   */
  oauth?: OAuthGate;
}

export interface HttpServerHandle {
  /** The endpoint, e.g. http://127.0.0.1:3333/mcp */
  url: string;
  port: number;
  /** Open 2025-era sessions (for tests and diagnostics). */
  sessionCount(): number;
  /** Closes sessions idle past their limit as of `now` (runs every 30 s on its own). */
  sweepSessions(now?: number): void;
  /**
   * Stops accepting, asks every call in flight to answer now with what it has (the task as it
   * stands, with its identity), waits briefly for those answers to be written, then closes.
   */
  close(): Promise<void>;
}

/** The key hash travels in AuthInfo.extra; `token` never holds a key or a hash of one. */
const authFor = (keyHash: string): AuthInfo => ({
  token: "",
  clientId: "generation-mcp",
  scopes: [],
  extra: { keyHash },
});
const hashOf = (auth: AuthInfo | undefined): string | undefined => {
  const value = auth?.extra?.keyHash;
  return typeof value === "string" ? value : undefined;
};

/** Routes an admitted request to the session table (2025 era) or the per-request handler (2026). */
function router(o: HttpServerOptions, sessions: Sessions, report: (e: unknown) => void) {
  const modern = createMcpHandler(
    ({ authInfo }) => {
      const keyHash = hashOf(authInfo);
      if (keyHash === undefined) throw new Error("request reached the MCP handler without a resolved key");
      return o.createServer(keyHash);
    },
    { legacy: "reject", maxRequestBodySize: MAX_BODY_BYTES, onerror: report },
  );
  // The body arrives parsed (see readJson): the SDK then neither clones the request nor reads it again.
  const route: FetchHandler = async (request, options) => {
    const keyHash = hashOf(options.authInfo);
    if (keyHash === undefined) return Response.json({ error: "Unauthorized" }, { status: 401 });
    const parsedBody = options.parsedBody;
    // Only 2025-era traffic has sessions, so a session ID settles the era without classifying.
    const legacy =
      request.headers.has("mcp-session-id") ||
      (await isLegacyRequest(request, parsedBody, { maxRequestBodySize: MAX_BODY_BYTES }));
    if (legacy) return sessions.serve(request, keyHash, parsedBody, options.authInfo);
    return modern.fetch(request, options);
  };
  return { route, close: () => modern.close() };
}

export async function startHttpServer(o: HttpServerOptions): Promise<HttpServerHandle> {
  const loopback = isLoopbackHost(o.host);
  const hostnames = allowedHostnames(o.host);
  if (o.oauth !== undefined && !hostnames.includes(o.oauth.hostname)) hostnames.push(o.oauth.hostname);
  const fallbackKey = loopback && o.oauth === undefined ? o.defaultApiKey : undefined;
  const report = (error: unknown) => o.onError?.(error instanceof Error ? error : new Error(String(error)));
  const sessions = new Sessions((keyHash) => o.createServer(keyHash), report, o.sessions);
  const { route, close: closeModern } = router(o, sessions, report);
  const exchanges = new Exchanges();
  let stopping = false;

  const serve = (req: IncomingMessage, res: ServerResponse, authInfo: AuthInfo) => {
    const exchange = (parsedBody?: unknown) => {
      const sessionId = req.headers["mcp-session-id"];
      serveExchange(req, res, { handler: route, authInfo, exchanges, parsedBody }, report, (succeeded) => {
        if (succeeded && typeof sessionId === "string") sessions.prove(sessionId);
      });
    };
    // Non-JSON POSTs go to the SDK unread, for its own 415.
    if (req.method !== "POST" || !isJsonContentType(req.headers["content-type"] ?? null)) return exchange();
    readJson(req).then(
      (body) =>
        body.ok ? exchange(body.value) : sendJson(res, body.status, body.message, { connection: "close" }),
      (error: unknown) => {
        report(error);
        if (!res.headersSent) sendJson(res, 400, "Bad Request: the body could not be read");
      },
    );
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path === "/healthz") return void health(req, res, hostnames, o.health);
    if (o.oauth !== undefined && path !== "/mcp") {
      const host = validateHostHeader(req.headers.host, hostnames);
      if (!host.ok) return sendJson(res, 403, `Forbidden: ${host.message}`);
      if (o.oauth.serve(req, res, path)) return;
    }
    if (path !== "/mcp") return sendJson(res, 404, "Not found: the MCP endpoint is /mcp");
    if (!admit(req, res, hostnames)) return;
    if (stopping) return sendJson(res, 503, "The server is shutting down", { connection: "close" });
    if (o.oauth !== undefined) {
      o.oauth.authenticate(req).then(
        (auth) => (auth instanceof Response ? void sendWeb(res, auth) : serve(req, res, auth)),
        (error: unknown) => {
          report(error);
          if (!res.headersSent) sendJson(res, 503, "The token store is not usable; retry shortly");
        },
      );
      return;
    }
    const key = chooseKey(req.headers.authorization, fallbackKey);
    if (!key.ok) return sendJson(res, 401, key.message);
    let authInfo: AuthInfo;
    try {
      authInfo = authFor(o.keyHash(key.apiKey));
    } catch {
      // A key the engine refuses (it names no reason that could echo the key).
      return sendJson(res, 401, "Unauthorized: the key in the Authorization header was refused");
    }
    serve(req, res, authInfo);
  };

  const server = createServer(handle);
  const sweep = setInterval(() => sessions.sweep(), 30_000);
  sweep.unref();
  await listen(server, o.port, o.host);
  const port = (server.address() as AddressInfo).port;
  const urlHost = o.host.includes(":") ? `[${o.host}]` : o.host;
  return {
    url: `http://${urlHost}:${port}/mcp`,
    port,
    sessionCount: () => sessions.size,
    sweepSessions: (now) => sessions.sweep(now),
    async close() {
      if (stopping) return;
      stopping = true;
      clearInterval(sweep);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await exchanges.settle(SHUTDOWN_GRACE_MS);
      await Promise.all([closeModern(), sessions.closeAll()]);
      server.closeAllConnections();
      await closed;
    },
  };
}

/** 200 when the ledger is usable, 503 otherwise; the body names no path, key or error text. */
async function health(
  req: IncomingMessage,
  res: ServerResponse,
  hostnames: string[],
  check: HttpServerOptions["health"],
): Promise<void> {
  if (!admit(req, res, hostnames)) return;
  const usable = await (check?.() ?? Promise.resolve()).then(
    () => true,
    () => false,
  );
  res
    .writeHead(usable ? 200 : 503, { "content-type": "application/json", "cache-control": "no-store" })
    .end(JSON.stringify({ status: usable ? "ok" : "unavailable", ledger: usable ? "usable" : "unusable" }));
}

/** Writes a small fetch Response (an OAuth challenge) to a Node response. */
async function sendWeb(res: ServerResponse, response: Response): Promise<void> {
  const body = await response.text();
  res.writeHead(response.status, Object.fromEntries(response.headers)).end(body);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
