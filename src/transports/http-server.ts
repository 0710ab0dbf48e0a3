/**
 * Streamable HTTP at /mcp, for both protocol eras. One request reads top to bottom in `handle`:
 * the Host and Origin checks of http-guard.ts; its credential checked once, where it arrives (a
 * service key, or with --auth oauth an access token: oauth/oauth-gate.ts), giving the engine of
 * that key; the body read once; then the exchange (http-exchange.ts, which decides delivery) served
 * with that engine, passed on explicitly:
 * - 2025-11-25 (and older 2025 revisions): sessionful, see http-sessions.ts.
 * - 2026-07-28: sessionless; the SDK's createMcpHandler serves the request with a fresh server over
 *   the request's engine and its exchange's delivery channel.
 * `GET /healthz` tells whether the ledger is usable; a probe without `Host` (HAProxy's default
 * check, HTTP/1.0) is answered too, since that status is all it reveals.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  validateHostHeader,
} from "@modelcontextprotocol/server";
import { DEFAULT_SERVE_LIMITS, serveLimits } from "../config/serve-limits.js";
import type { Channel } from "../mcp/delivery.js";
import { LimitLog, Shares } from "../shared/fair-shares.js";
import { listenShared } from "./http-accept.js";
import { Admission, ratesSet, refuseRate } from "./http-admission.js";
import { AnonymousShare, holdPlace } from "./http-anonymous.js";
import { bodyBudget, MIB, readJson } from "./http-body.js";
import { guardConnections, wasRefused } from "./http-connections.js";
import { Exchanges, serveExchange } from "./http-exchange.js";
import {
  admit,
  allowedHostnames,
  chooseKey,
  health,
  isLoopbackHost,
  MAX_BODY_BYTES,
  refuseUnread,
  sendJson,
} from "./http-guard.js";
import { Listens } from "./http-listens.js";
import type { HttpServerHandle, HttpServerOptions } from "./http-options.js";
import { deploymentPools } from "./http-pools.js";
import { type Keyed, Sessions } from "./http-sessions.js";
import { withTaskListen } from "./http-task-listens.js";

export { isLoopbackHost, MAX_BODY_BYTES, MAX_JSON_DEPTH } from "./http-guard.js";
export type { HttpServerHandle, HttpServerOptions, TokenGate } from "./http-options.js";
export { MAX_SESSIONS, MAX_SESSIONS_PER_KEY, SESSION_IDLE_MS, UNPROVEN_IDLE_MS } from "./http-sessions.js";

/** How long a shutdown waits for the calls in flight to write their answers. */
export const SHUTDOWN_GRACE_MS = 1_500;
/**
 * 2026-07-28 `subscriptions/listen` streams open at once, over all requests: each request is
 * served by a handler of its own, so the SDK's cap per handler (the same number) bounds nothing.
 * Each key has its share of them (listensPerKey).
 */
export const MAX_SUBSCRIPTIONS = DEFAULT_SERVE_LIMITS.listens;
/**
 * Routes one exchange, already given its engine, to the session table (2025 era) or to a
 * 2026-07-28 handler whose one server is built over that engine and the exchange's channel.
 */
function router<E extends Keyed>(
  o: HttpServerOptions<E>,
  sessions: Sessions<E>,
  report: (e: unknown) => void,
  listens: Listens,
) {
  const modernOptions = { legacy: "reject", maxRequestBodySize: MAX_BODY_BYTES, onerror: report } as const;
  // The body arrives parsed (see readJson): the SDK then neither clones the request nor reads it again.
  return async (request: Request, engine: E, channel: Channel, parsedBody: unknown): Promise<Response> => {
    // Only 2025-era traffic has sessions, so a session ID settles the era without classifying.
    const legacy =
      request.headers.has("mcp-session-id") ||
      (await isLegacyRequest(request, parsedBody, { maxRequestBodySize: MAX_BODY_BYTES }));
    if (legacy) return sessions.serve(request, engine, channel, parsedBody);
    const listen = parsedBody as { method?: unknown; id?: unknown } | null;
    const listening = listen?.method === "subscriptions/listen";
    if (listening) {
      const refused = await listens.claim(engine.keyHash, listen.id, channel);
      if (refused !== undefined) return refused;
    }
    const modern = createMcpHandler(() => o.createServer(engine, channel), modernOptions);
    const response = await modern.fetch(request, parsedBody === undefined ? {} : { parsedBody });
    if (!listening) return response;
    // The tasks a listen names are followed on its stream (http-task-listens.ts).
    const tasked = await withTaskListen(response, parsedBody, o.taskFeed?.(engine));
    return listens.idleBound(tasked, listen?.id ?? null);
  };
}

export async function startHttpServer<E extends Keyed>(o: HttpServerOptions<E>): Promise<HttpServerHandle> {
  const loopback = isLoopbackHost(o.host);
  const localNames = allowedHostnames(o.host);
  const hostnames = [...localNames];
  for (const name of [...(o.oauth === undefined ? [] : [o.oauth.hostname]), ...(o.publicHosts ?? [])]) {
    if (!hostnames.includes(name)) hostnames.push(name);
  }
  const fallbackKey = loopback && o.oauth === undefined ? o.defaultApiKey : undefined;
  const report = (error: unknown) => o.onError?.(error instanceof Error ? error : new Error(String(error)));
  const limits = serveLimits(o.limits);
  const log = new LimitLog((line) => (o.onLimit ?? ((l: string) => report(new Error(l))))(line));
  const sessionLimits = {
    maxSessions: limits.sessions,
    maxPerKey: limits.sessionsPerKey,
    idleMs: limits.sessionIdleS * 1000,
    ...o.sessions,
  };
  const shared = deploymentPools(o, limits, log);
  const sessions = new Sessions<E>(o.createServer, report, sessionLimits, log, shared?.sessions);
  const listenTotal = o.maxSubscriptions ?? limits.listens;
  const listens = new Listens(
    { total: listenTotal, perKey: limits.listensPerKey, idleMs: limits.listenIdleS * 1000 },
    log,
    shared?.listens,
  );
  const route = router(o, sessions, report, listens);
  const bodies = new Shares(limits.bodyMiB * MIB, limits.bodyMiBPerKey * MIB);
  const exchanges = new Exchanges();
  // Only where strangers reach it (or set): on loopback in key mode every caller is this machine's.
  const strangersReach = !loopback || o.oauth !== undefined || ratesSet(o.limits);
  const admission = new Admission(limits, log, o.isProxy, strangersReach);
  const anonymous = new AnonymousShare(limits, log, strangersReach);
  let stopping = false;

  /** One admitted request under its engine: the body read once, then the exchange. */
  const serve = (req: IncomingMessage, res: ServerResponse, engine: E) => {
    const exchange = (parsedBody?: unknown) => {
      const sessionId = req.headers["mcp-session-id"];
      const handler = (request: Request, channel: Channel) => route(request, engine, channel, parsedBody);
      serveExchange(req, res, { handler, exchanges, parsedBody }, report, (succeeded) => {
        if (succeeded && typeof sessionId === "string") sessions.prove(sessionId);
      });
    };
    if (req.method !== "POST") {
      // A GET or DELETE carries no body; one that does would be buffered outside the budget.
      if (carriesBody(req))
        return sendJson(res, 400, `Bad Request: a ${req.method} to /mcp carries no body`, {
          connection: "close",
        });
      return exchange();
    }
    // Refused here, in the SDK's words, with the body unread: the SDK's reader would buffer it
    // outside the body budget (32 such 47 MiB bodies peaked at 1.4 GiB).
    if (!isJsonContentType(req.headers["content-type"] ?? null))
      return refuseUnread(req, res, 415, "Unsupported Media Type: Content-Type must be application/json");
    const streamed = (n: number) => admission.streamed(engine.keyHash, n);
    readJson(req, bodyBudget(bodies, engine.keyHash, res, log), streamed).then(
      (body) =>
        body.ok ? exchange(body.value) : refuseUnread(req, res, body.status, body.message, body.headers),
      (error: unknown) => {
        report(error);
        if (!res.headersSent) sendJson(res, 400, "Bad Request: the body could not be read");
      },
    );
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    // Already answered 503 on the connection (http-connections.ts): nothing more is written.
    if (wasRefused(req.socket)) return;
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path === "/healthz") return void health(req, res, hostnames, o.health);
    // Requests no credential admits are counted by address before any work (http-admission.ts).
    const source = admission.sourceOf(req);
    const oauth = o.oauth;
    if (oauth !== undefined && path !== "/mcp") {
      const host = validateHostHeader(req.headers.host, hostnames);
      if (!host.ok) return sendJson(res, 403, `Forbidden: ${host.message}`);
      // The process-wide share first, synchronously (http-anonymous.ts), then the address's rate.
      if (!holdPlace(anonymous, req, res, path)) return;
      return void admission.anonymous(req, source).then((refused) => {
        if (refused !== undefined) refuseRate(req, res, refused);
        else if (!oauth.serve(req, res, path)) sendJson(res, 404, "Not found: the MCP endpoint is /mcp");
      }, report);
    }
    if (path !== "/mcp") return sendJson(res, 404, "Not found: the MCP endpoint is /mcp");
    if (!admit(req, res, hostnames)) return;
    if (stopping) return sendJson(res, 503, "The server is shutting down", { connection: "close" });
    // The credential, checked once, here: the engine it gives serves the whole request, once its
    // key's rate admits it; a refused credential counts against the address and the strangers'
    // share, taken before the check when no credential is presented at all.
    const bare = oauth !== undefined && req.headers.authorization === undefined;
    if (bare && !holdPlace(anonymous, req, res, path)) return;
    const checked =
      oauth === undefined
        ? Promise.resolve(byKey(req, o, reachedLocally(req, localNames) ? fallbackKey : undefined))
        : oauth.authenticate(req);
    checked
      .then(async (engine) => {
        if (engine instanceof Response && !bare && !holdPlace(anonymous, req, res, path)) return;
        const refused = await (engine instanceof Response
          ? admission.anonymous(req, source)
          : admission.keyed(req, engine.keyHash));
        if (refused !== undefined) refuseRate(req, res, refused);
        else if (engine instanceof Response) await sendWeb(res, engine);
        else serve(req, res, engine);
      })
      .catch((error: unknown) => {
        report(error);
        if (!res.headersSent) sendJson(res, 503, "The token store is not usable; retry shortly");
      });
  };

  const server = createServer(handle);
  guardConnections(server, limits, log, o.isProxy);
  const sweep = setInterval(() => sessions.sweep(), 30_000);
  sweep.unref();
  await listenShared(server, o.port, o.host);
  const port = (server.address() as AddressInfo).port;
  const urlHost = o.host.includes(":") ? `[${o.host}]` : o.host;
  return {
    url: `http://${urlHost}:${port}/mcp`,
    port,
    hosts: hostnames,
    sessionCount: () => sessions.size,
    sweepSessions: (now) => sessions.sweep(now),
    async close() {
      if (stopping) return;
      stopping = true;
      clearInterval(sweep);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await exchanges.settle(SHUTDOWN_GRACE_MS);
      await sessions.closeAll();
      server.closeAllConnections();
      await closed;
      await Promise.all([shared?.sessions.close(), shared?.listens.close()]);
    },
  };
}

/** Key mode: the engine of the key a request presents (or the fallback), or the answer refusing it. */
function byKey<E extends Keyed>(
  req: IncomingMessage,
  o: HttpServerOptions<E>,
  fallbackKey: string | undefined,
): E | Response {
  const key = chooseKey(req.headers.authorization, fallbackKey);
  if (!key.ok) return jsonError(401, key.message);
  try {
    return o.engineFor(key.apiKey);
  } catch {
    // A key the engine refuses (it names no reason that could echo the key).
    return jsonError(401, "Unauthorized: the key in the Authorization header was refused");
  }
}

/** Whether a request announces a body (a length above 0, or chunks). */
const carriesBody = (req: IncomingMessage): boolean =>
  req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;

/** Whether a request named this machine itself in `Host` (a loopback name or the bind address). */
function reachedLocally(req: IncomingMessage, localNames: string[]): boolean {
  const host = validateHostHeader(req.headers.host, localNames);
  return host.ok;
}

/** A refusal before any MCP exchange, in the JSON-RPC error shape sendJson writes. */
function jsonError(status: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, { status });
}

/** Writes a small fetch Response (a refusal, an OAuth challenge) to a Node response. */
async function sendWeb(res: ServerResponse, response: Response): Promise<void> {
  const body = await response.text();
  res.writeHead(response.status, Object.fromEntries(response.headers)).end(body);
}
