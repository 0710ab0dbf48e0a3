/**
 * What the HTTP server (http-server.ts) is started with and gives back: its options, the OAuth
 * gate it consults (oauth/oauth-gate.ts), and the handle its caller stops it by.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServeLimits } from "../config/serve-limits.js";
import type { TaskFeed } from "../mcp/mcp-task-wire-listen.js";
import type { ShareStore } from "../shared/deployment-shares.js";
import type { Keyed, ServerFactory, SessionLimits } from "./http-sessions.js";

/** --auth oauth as the HTTP server uses it (oauth/oauth-gate.ts's OAuthGate). */
export interface TokenGate<E> {
  /** The public URL's host name, which Host headers may carry. */
  readonly hostname: string;
  /** Serves an OAuth route (metadata, authorization server, sign-in); false when `path` is none. */
  serve(req: IncomingMessage, res: ServerResponse, path: string): boolean;
  /** Checks a request's access token: the engine of the key behind it, or the 401/403 answer. */
  authenticate(req: IncomingMessage): Promise<E | Response>;
}

export interface HttpServerOptions<E extends Keyed> {
  host: string;
  port: number;
  /**
   * Key mode (no `oauth`): the engine for a request's key, its own `Authorization: Bearer lgk_…`
   * or `defaultApiKey`; throws for a key it refuses. Sessions and records are bound to the
   * engine's key hash, never the key.
   */
  engineFor(apiKey: string): E;
  /**
   * GENERATION_API_KEY: the key of sessions that bring none, honoured only when bound to loopback
   * and reached by a loopback name (never through a front forwarding a public one).
   */
  defaultApiKey?: string;
  /** Host names `Host` may carry besides the bind address's (GENERATION_PUBLIC_URL's, GENERATION_ALLOWED_HOSTS). */
  publicHosts?: string[];
  /** One MCP server over an engine: createMcpServer, whose calls deliver on `channel`. */
  createServer: ServerFactory<E>;
  /**
   * 2026-07-28: how a listen naming tasks follows them for the engine's key (the surface's
   * taskFeedFor); without it, a listen's `taskIds` are not acknowledged.
   */
  taskFeed?(engine: E): TaskFeed;
  /** Resolves when the ledger is usable, rejects otherwise (GET /healthz). */
  health?(): Promise<void>;
  onError?(error: Error): void;
  /** Session caps and idle times (tests shorten them). */
  sessions?: Partial<SessionLimits>;
  /** Subscription streams open at once (default MAX_SUBSCRIPTIONS; tests lower it). */
  maxSubscriptions?: number;
  /** The pools' totals and shares (GENERATION_HTTP_LIMITS; serve-limits.ts has the defaults). */
  limits?: Partial<ServeLimits>;
  /**
   * The ledger's keyed values (the CLI: `ledger.keyed()`): each key's share of sessions and listen
   * streams is then counted on every replica on that store together; without it, per process.
   */
  shareStore?: () => Promise<ShareStore>;
  /** The operator's log of refusals by a limit, once a minute per source (default: onError). */
  onLimit?(line: string): void;
  /** Addresses whose connections count only in the total (the trusted proxies in front). */
  isProxy?(address: string): boolean;
  /**
   * --auth oauth: the OAuth routes, and the access token (never a service key) as the credential
   * of /mcp; a request's engine is then the one of the key behind the token's grant.
   */
  oauth?: TokenGate<E>;
}

export interface HttpServerHandle {
  /** The endpoint, e.g. http://127.0.0.1:3333/mcp */
  url: string;
  port: number;
  /** The host names `Host` may carry; every other is refused (DNS-rebinding protection). */
  hosts: string[];
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
