/**
 * Streamable HTTP at /mcp, for both protocol eras:
 * - 2025-11-25 (and older 2025 revisions): sessionful. The `initialize` request opens a session bound
 *   to the key it came with; every later request on that session must carry the same key.
 * - 2026-07-28: sessionless; the SDK's createMcpHandler serves each request with a fresh server for
 *   the key of that very request.
 * In front of both: DNS-rebinding checks (Host, Origin) and key resolution, all from headers only, so
 * a refused request is answered before its body is read.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { type NodeIncomingMessageLike, toNodeHandler } from "@modelcontextprotocol/node";
import {
  type AuthInfo,
  createMcpHandler,
  isInitializeRequest,
  isJsonContentType,
  isLegacyRequest,
  type McpServer,
  validateHostHeader,
  validateOriginHeader,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";

/**
 * 48 MiB: a 30 MiB asset sent as base64 `data` to upload_asset is 40 MiB of JSON, plus room for the
 * envelope. Both the Node adapter and the SDK's own readers get the same bound; larger bodies get 413.
 */
export const MAX_BODY_BYTES = 48 * 1024 * 1024;
/** A session nobody has used for this long is closed, so abandoned clients do not pile up. */
export const SESSION_IDLE_MS = 60 * 60 * 1000;
export const MAX_SESSIONS = 1_000;
const BEARER = /^Bearer\s+(lgk_[0-9a-f]{64})\s*$/;
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

export interface HttpServerOptions {
  host: string;
  port: number;
  /** GENERATION_API_KEY: the key of sessions that bring none, honoured only when bound to loopback. */
  defaultApiKey?: string;
  /** Registers a key and returns its hash: sessions and records are bound to the hash, never the key. */
  keyHash(apiKey: string): string;
  /** One MCP server for one key (by hash): createMcpServer over that key's engine. */
  createServer(keyHash: string): McpServer | Promise<McpServer>;
  onError?(error: Error): void;
}

export interface HttpServerHandle {
  /** The endpoint, e.g. http://127.0.0.1:3333/mcp */
  url: string;
  port: number;
  /** Open 2025-era sessions (for tests and diagnostics). */
  sessionCount(): number;
  close(): Promise<void>;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  keyHash: string;
  lastSeen: number;
}

export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Host names a browser-independent client may use to reach us; anything else is a rebinding attempt. */
function allowedHostnames(host: string): string[] {
  const names = new Set(LOOPBACK_NAMES);
  if (host === "0.0.0.0" || host === "::") {
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) names.add(a.family === "IPv6" ? `[${a.address}]` : a.address);
    }
  } else {
    names.add(host.includes(":") ? `[${host}]` : host);
  }
  return [...names];
}

function sendJson(
  res: ServerResponse,
  status: number,
  error: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: error }, id: null });
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(body);
}

type BodyRead = { ok: true; value: unknown } | { ok: false; status: number; message: string };

/** Reads and parses a JSON body once, within MAX_BODY_BYTES. */
async function readJson(req: IncomingMessage): Promise<BodyRead> {
  const tooLarge: BodyRead = {
    ok: false,
    status: 413,
    message: `Payload too large: the limit is ${MAX_BODY_BYTES} bytes`,
  };
  if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return tooLarge;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return tooLarge;
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks, size).toString("utf8")) as unknown };
  } catch {
    return { ok: false, status: 400, message: "Parse error: the body is not valid JSON" };
  }
}

function jsonResponse(status: number, message: string): Response {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null });
  return new Response(body, { status, headers: { "content-type": "application/json" } });
}

export async function startHttpServer(o: HttpServerOptions): Promise<HttpServerHandle> {
  const loopback = isLoopbackHost(o.host);
  const hostnames = allowedHostnames(o.host);
  const fallbackKey = loopback ? o.defaultApiKey : undefined;
  const report = (error: unknown) => o.onError?.(error instanceof Error ? error : new Error(String(error)));
  const sessions = new Map<string, Session>();

  const modern = createMcpHandler(
    ({ authInfo }) => {
      if (authInfo === undefined) throw new Error("request reached the MCP handler without a resolved key");
      return o.createServer(authInfo.token);
    },
    { legacy: "reject", maxRequestBodySize: MAX_BODY_BYTES, onerror: report },
  );

  async function openSession(request: Request, keyHash: string, parsedBody: unknown): Promise<Response> {
    if (sessions.size >= MAX_SESSIONS)
      return jsonResponse(503, "Too many open sessions; close one and retry");
    const server = await o.createServer(keyHash);
    const session: Session = {
      server,
      keyHash,
      lastSeen: Date.now(),
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        maxRequestBodySize: MAX_BODY_BYTES,
        onsessioninitialized: (id) => {
          sessions.set(id, session);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      }),
    };
    session.transport.onclose = () => {
      if (session.transport.sessionId !== undefined) sessions.delete(session.transport.sessionId);
    };
    await server.connect(session.transport);
    return session.transport.handleRequest(request, { parsedBody });
  }

  async function serveLegacy(request: Request, keyHash: string, parsedBody: unknown): Promise<Response> {
    const id = request.headers.get("mcp-session-id");
    if (id === null) {
      if (isInitializeRequest(parsedBody)) return openSession(request, keyHash, parsedBody);
      return jsonResponse(400, "Bad Request: no Mcp-Session-Id; open a session with initialize first");
    }
    const session = sessions.get(id);
    if (session === undefined) return jsonResponse(404, "Session not found; initialize a new one");
    // The session is the key's: another key (even a valid one) must not ride on it.
    if (session.keyHash !== keyHash)
      return jsonResponse(403, "Forbidden: this session was opened with another key");
    session.lastSeen = Date.now();
    return session.transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
  }

  // The body arrives parsed (see readJson below): the SDK then neither clones the request nor reads it again.
  const route = async (
    request: Request,
    options?: { authInfo?: AuthInfo; parsedBody?: unknown },
  ): Promise<Response> => {
    const authInfo = options?.authInfo;
    if (authInfo === undefined) return jsonResponse(401, "Unauthorized");
    const parsedBody = options?.parsedBody;
    // Only 2025-era traffic has sessions, so a session ID settles the era without classifying.
    const legacy =
      request.headers.has("mcp-session-id") ||
      (await isLegacyRequest(request, parsedBody, { maxRequestBodySize: MAX_BODY_BYTES }));
    if (legacy) return serveLegacy(request, authInfo.token, parsedBody);
    return modern.fetch(request, parsedBody === undefined ? { authInfo } : { authInfo, parsedBody });
  };
  const nodeHandler = toNodeHandler(
    { fetch: route },
    { maxRequestBodySize: MAX_BODY_BYTES, onerror: report },
  );

  const server = createServer((req: IncomingMessage & { auth?: AuthInfo }, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/mcp") return sendJson(res, 404, "Not found: the MCP endpoint is /mcp");
    const host = validateHostHeader(req.headers.host, hostnames);
    if (!host.ok) return sendJson(res, 403, `Forbidden: ${host.message}`);
    const origin = validateOriginHeader(req.headers.origin, hostnames);
    if (!origin.ok) return sendJson(res, 403, `Forbidden: ${origin.message}`);
    // A page on a loopback origin (the Inspector in direct mode) may call us: answer its CORS checks.
    if (origin.origin !== undefined) {
      res.setHeader("access-control-allow-origin", origin.origin);
      res.setHeader("vary", "Origin");
      res.setHeader(
        "access-control-expose-headers",
        "mcp-session-id, mcp-protocol-version, www-authenticate",
      );
      if (req.method === "OPTIONS") {
        res.writeHead(204, {
          "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
          "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "*",
          "access-control-max-age": "600",
        });
        return void res.end();
      }
    }

    const authorization = req.headers.authorization;
    let apiKey: string | undefined;
    if (authorization !== undefined) {
      apiKey = BEARER.exec(authorization)?.[1];
      if (apiKey === undefined) {
        // Never echo the header: it is someone's secret, maybe mistyped.
        return sendJson(res, 401, "Unauthorized: expected 'Authorization: Bearer lgk_' + 64 lowercase hex", {
          "www-authenticate": 'Bearer error="invalid_token"',
        });
      }
    } else {
      apiKey = fallbackKey;
    }
    if (apiKey === undefined) {
      const why = loopback ? "no GENERATION_API_KEY is set" : "the server is not bound to loopback";
      return sendJson(res, 401, `Unauthorized: send 'Authorization: Bearer lgk_…' (${why})`, {
        "www-authenticate": "Bearer",
      });
    }
    try {
      req.auth = { token: o.keyHash(apiKey), clientId: "generation-mcp", scopes: [] };
    } catch {
      // A key the engine refuses (it names no reason that could echo the key).
      return sendJson(res, 401, "Unauthorized: the key was refused", { "www-authenticate": "Bearer" });
    }
    const serve = (parsedBody?: unknown) =>
      // node types `method` as string | undefined, the adapter as optional: same thing at runtime.
      nodeHandler(req as NodeIncomingMessageLike, res, parsedBody).catch((error: unknown) => {
        report(error);
        if (!res.headersSent) sendJson(res, 500, "Internal error");
      });
    // Non-JSON POSTs go to the SDK unread, for its own 415.
    if (req.method !== "POST" || !isJsonContentType(req.headers["content-type"] ?? null)) return void serve();
    readJson(req).then(
      (body) =>
        body.ok ? serve(body.value) : sendJson(res, body.status, body.message, { connection: "close" }),
      (error: unknown) => {
        report(error);
        if (!res.headersSent) sendJson(res, 400, "Bad Request: the body could not be read");
      },
    );
  });

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, s] of sessions) {
      if (now - s.lastSeen > SESSION_IDLE_MS) {
        sessions.delete(id);
        s.server.close().catch(report);
      }
    }
  }, 60_000);
  sweep.unref();

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = o.host.includes(":") ? `[${o.host}]` : o.host;
  return {
    url: `http://${urlHost}:${port}/mcp`,
    port,
    sessionCount: () => sessions.size,
    async close() {
      clearInterval(sweep);
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all([modern.close(), ...open.map((s) => s.server.close().catch(report))]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
