/**
 * What every HTTP request passes before the MCP layer sees it, from headers first (so a refused
 * request is answered before its body is read): DNS-rebinding checks (Host, Origin), CORS for
 * loopback pages, the key it runs under; the refusal of a request whose body is left unread. The
 * body itself is read by http-body.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { networkInterfaces } from "node:os";
import { validateHostHeader, validateOriginHeader } from "@modelcontextprotocol/server";
import { LIMITS } from "../config/service-limits.js";

/**
 * 48 MiB: a 30 MiB asset sent as base64 `data` to upload_asset is 40 MiB of JSON, plus room for the
 * envelope. Both our reader and the SDK's own readers get the same bound; larger bodies get 413.
 */
export const MAX_BODY_BYTES = 48 * 1024 * 1024;
/**
 * Nesting deeper than this is refused with 400 before anything walks the body: no MCP message
 * comes close, and classifying a deeper one recursively would exhaust the stack.
 */
export const MAX_JSON_DEPTH = 64;

/** A bearer credential; a service key only when it also has the key's form (LIMITS.apiKeyPattern). */
const BEARER = /^Bearer\s+(\S+)\s*$/;
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

// Decided with the configuration (remote users are judged by it too): one rule for both.
export { isLoopbackHost } from "../config/index.js";

/** Host names a browser-independent client may use to reach us; anything else is a rebinding attempt. */
export function allowedHostnames(host: string): string[] {
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

export function sendJson(
  res: ServerResponse,
  status: number,
  error: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: error }, id: null });
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(body);
}

/**
 * Host and Origin checks, and CORS for a page on a loopback origin (the Inspector in direct mode).
 * Returns false once it has answered the request itself (a refusal, or a preflight).
 */
export function admit(req: IncomingMessage, res: ServerResponse, hostnames: string[]): boolean {
  const host = validateHostHeader(req.headers.host, hostnames);
  if (!host.ok) {
    sendJson(res, 403, `Forbidden: ${host.message}`);
    return false;
  }
  const origin = validateOriginHeader(req.headers.origin, hostnames);
  if (!origin.ok) {
    sendJson(res, 403, `Forbidden: ${origin.message}`);
    return false;
  }
  if (origin.origin === undefined) return true;
  res.setHeader("access-control-allow-origin", origin.origin);
  res.setHeader("vary", "Origin");
  res.setHeader("access-control-expose-headers", "mcp-session-id, mcp-protocol-version, www-authenticate");
  if (req.method !== "OPTIONS") return true;
  res.writeHead(204, {
    "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
    "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "*",
    "access-control-max-age": "600",
  });
  res.end();
  return false;
}

export type KeyChoice = { ok: true; apiKey: string } | { ok: false; message: string };

/**
 * The key a request runs under: its own `Authorization: Bearer`, else the fallback (the
 * configured key, only when bound to loopback). Refusals carry no `WWW-Authenticate` challenge:
 * there is no sign-in flow here, and bridges such as mcp-remote take a challenge as a cue to
 * start one, hiding the message. Messages never echo the header: it is someone's secret.
 */
export function chooseKey(authorization: string | undefined, fallback: string | undefined): KeyChoice {
  if (authorization !== undefined) {
    const apiKey = BEARER.exec(authorization)?.[1];
    if (apiKey !== undefined && LIMITS.apiKeyPattern.test(apiKey)) return { ok: true, apiKey };
    return {
      ok: false,
      message: "Unauthorized: the Authorization header must be 'Bearer lgk_' followed by 64 lowercase hex",
    };
  }
  if (fallback !== undefined) return { ok: true, apiKey: fallback };
  return {
    ok: false,
    message:
      "Unauthorized: send the service key in the Authorization header ('Authorization: Bearer lgk_…'); this server has no key of its own for requests without one",
  };
}

/**
 * How long a refused request's unread body is read and dropped so the client sees the refusal: up
 * to LINGER_MS in all, and no longer than LINGER_IDLE_MS without a byte (nginx's lingering_time and
 * lingering_timeout); the per-address connection cap bounds how many linger at once.
 */
export const LINGER_MS = 30_000;
export const LINGER_IDLE_MS = 2_000;

/**
 * A refusal to a request whose body is not read whole: the answer goes out first; the rest of the
 * body is read and dropped (never held) within the linger bounds, then the connection is closed. A
 * server that closes at once with bytes unread makes the kernel reset the connection, and the
 * client reports the reset instead of the refusal (the lingering close HTTP servers practise).
 */
export function refuseUnread(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  error: string,
  headers: Record<string, string> = {},
): void {
  if (req.complete) {
    sendJson(res, status, error, { connection: "close", ...headers });
    return;
  }
  sendJson(res, status, error, headers);
  // Progress is read off the socket's byte count: Node's server drops a request's `data` listeners
  // once the answer is sent (it dumps the rest of the body itself).
  const { socket } = req;
  const started = Date.now();
  let seen = socket.bytesRead;
  const check = setInterval(() => {
    if (socket.bytesRead === seen || Date.now() - started >= LINGER_MS) socket.destroy();
    seen = socket.bytesRead;
  }, LINGER_IDLE_MS);
  check.unref();
  req.once("close", () => clearInterval(check)).resume();
}

/** 200 when the ledger is usable, 503 otherwise; the body names no path, key or error text. */
export async function health(
  req: IncomingMessage,
  res: ServerResponse,
  hostnames: string[],
  check: (() => Promise<void>) | undefined,
): Promise<void> {
  // A probe with neither header (a balancer's check) cannot be a page's rebinding attempt:
  // browsers always send Host. Any Host or Origin it does send is checked as everywhere else.
  const probe = req.headers.host === undefined && req.headers.origin === undefined;
  if (!probe && !admit(req, res, hostnames)) return;
  const usable = await (check?.() ?? Promise.resolve()).then(
    () => true,
    () => false,
  );
  res
    .writeHead(usable ? 200 : 503, { "content-type": "application/json", "cache-control": "no-store" })
    .end(JSON.stringify({ status: usable ? "ok" : "unavailable", ledger: usable ? "usable" : "unusable" }));
}
