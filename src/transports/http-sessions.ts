/**
 * 2025-era sessions (2025-11-25 and older revisions): the `initialize` request opens a session
 * bound to the key it came with, served by one server over that key's engine (the one the request
 * was given where its key was checked); every later request on it must carry the same key. Each
 * exchange hands the session its delivery channel, for the tool calls it carries.
 *
 * Nobody can lock others out by opening sessions: each key hash has its own cap; a session that
 * has not yet answered a successful tool call (its key may be one the service never accepted)
 * idles out after minutes, not an hour, and is the first to make room when the table is full;
 * and when every session is proven, a key holding fewer than the largest holder takes the
 * largest holder's least recently used one (so 41 keys of 100 cannot shut out the 42nd). A slot
 * is claimed before the first `await` of an open (fair-shares.ts), so a burst cannot overshoot.
 */
import { randomUUID } from "node:crypto";
import {
  type HandleRequestOptions,
  isInitializeRequest,
  type McpServer,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { DEFAULT_SERVE_LIMITS } from "../config/serve-limits.js";
import { type Channel, type DeliveryChannel, SessionChannel } from "../mcp/delivery.js";
import type { DeploymentShares } from "../shared/deployment-shares.js";
import { type LimitLog, once, type PoolRefusal, Shares, sourceOfKey } from "../shared/fair-shares.js";
import { MAX_BODY_BYTES } from "./http-guard.js";

/**
 * Sessions open at once: room for a thousand users with a few each (hosts open one per
 * conversation), about 50 KiB of memory each while idle (npm run bench, part h), so some 200 MiB
 * at the cap.
 */
export const MAX_SESSIONS = DEFAULT_SERVE_LIMITS.sessions;
export const MAX_SESSIONS_PER_KEY = DEFAULT_SERVE_LIMITS.sessionsPerKey;
/** What a refused open is told to wait: about when an unproven session idles out or is swept. */
export const SESSION_RETRY_S = 60;
/** A session nobody has used for this long is closed, so abandoned clients do not pile up. */
export const SESSION_IDLE_MS = 60 * 60 * 1000;
/** The same for a session that never made a successful tool call. */
export const UNPROVEN_IDLE_MS = 2 * 60 * 1000;

/** What a request runs as: its key's engine (only the key's hash matters here). */
export interface Keyed {
  readonly keyHash: string;
}

/** Builds the server of a session (or of one request) over an engine, settling delivery on `channel`. */
export type ServerFactory<E> = (engine: E, channel: DeliveryChannel) => McpServer | Promise<McpServer>;

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  keyHash: string;
  delivery: SessionChannel;
  lastSeen: number;
  /** It has answered a tool call that was not an error: its key works. */
  proven: boolean;
  /** Gives its slot back (once, whichever ending comes first). */
  release: () => void;
}

export interface SessionLimits {
  maxSessions: number;
  maxPerKey: number;
  idleMs: number;
  unprovenIdleMs: number;
}

const DEFAULT_LIMITS: SessionLimits = {
  maxSessions: MAX_SESSIONS,
  maxPerKey: MAX_SESSIONS_PER_KEY,
  idleMs: SESSION_IDLE_MS,
  unprovenIdleMs: UNPROVEN_IDLE_MS,
};

/** Whether a parsed body is a `tools/call` request. */
const isToolCall = (body: unknown): boolean =>
  Array.isArray(body)
    ? body.some(isToolCall)
    : typeof body === "object" && body !== null && (body as { method?: unknown }).method === "tools/call";

function jsonResponse(status: number, message: string, headers: Record<string, string> = {}): Response {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null });
  return new Response(body, { status, headers: { "content-type": "application/json", ...headers } });
}

/** The 503 of an open refused by a bound, naming it and when to retry. */
function refusedOpen(refusal: PoolRefusal, where = ""): Response {
  const message =
    refusal.bound === "share"
      ? `Too many open sessions for this key${where} (limit ${refusal.limit} per key, sessionsPerKey); close one (DELETE) or retry after ${SESSION_RETRY_S} s`
      : `Too many open sessions on this server (limit ${refusal.limit}, sessions); retry after ${SESSION_RETRY_S} s`;
  return jsonResponse(503, message, { "retry-after": String(SESSION_RETRY_S) });
}

export class Sessions<E extends Keyed> {
  readonly #byId = new Map<string, Session>();
  readonly #limits: SessionLimits;
  readonly #shares: Shares;
  readonly #create: ServerFactory<E>;
  readonly #report: (error: unknown) => void;
  readonly #log: LimitLog | undefined;
  readonly #deployment: DeploymentShares | undefined;

  /** `deployment`: each key's share counted on every replica together (the ledger's store). */
  constructor(
    create: ServerFactory<E>,
    report: (error: unknown) => void,
    limits: Partial<SessionLimits> = {},
    log?: LimitLog,
    deployment?: DeploymentShares,
  ) {
    this.#create = create;
    this.#report = report;
    this.#limits = { ...DEFAULT_LIMITS, ...limits };
    this.#shares = new Shares(this.#limits.maxSessions, this.#limits.maxPerKey);
    this.#log = log;
    this.#deployment = deployment;
  }

  /** Sessions open. */
  get size(): number {
    return this.#byId.size;
  }

  /** Slots held: open sessions and opens under way. */
  get claimed(): number {
    return this.#shares.used;
  }

  /**
   * Serves a 2025-era request under `engine` (its key, checked where it arrived): opens a session on
   * `initialize`, else routes by Mcp-Session-Id; the tool calls it carries deliver on `channel`.
   */
  async serve(request: Request, engine: E, channel: Channel, parsedBody: unknown): Promise<Response> {
    const id = request.headers.get("mcp-session-id");
    const options = parsedBody === undefined ? {} : { parsedBody };
    if (id === null) {
      if (isInitializeRequest(parsedBody)) return this.#open(request, engine, options);
      return jsonResponse(400, "Bad Request: no Mcp-Session-Id; open a session with initialize first");
    }
    const session = this.#byId.get(id);
    // Another key's session (even a valid key's) answers as an unknown one: whether it exists is not
    // for that key to learn.
    if (session === undefined || session.keyHash !== engine.keyHash)
      return jsonResponse(404, "Session not found; initialize a new one");
    session.delivery.carry(channel, parsedBody);
    const response = await session.transport.handleRequest(request, options);
    // Progress, not presence, keeps a session: a request answered without an HTTP error renews its
    // idle time, except a tool call, which renews it only once it succeeded (prove): a refused call
    // (a limit, a price, an unknown model) leaves it to idle out.
    if (response.ok && !isToolCall(parsedBody)) session.lastSeen = Date.now();
    return response;
  }

  /** A tool call on this session succeeded: its key is one the service accepts, and it made progress. */
  prove(id: string | null): void {
    const session = id === null ? undefined : this.#byId.get(id);
    if (session === undefined) return;
    session.proven = true;
    session.lastSeen = Date.now();
  }

  /** Closes sessions idle past their limit. */
  sweep(now = Date.now()): void {
    for (const [id, s] of this.#byId) {
      const limit = s.proven ? this.#limits.idleMs : this.#limits.unprovenIdleMs;
      if (now - s.lastSeen > limit) this.#end(id, s);
    }
  }

  async closeAll(): Promise<void> {
    const open = [...this.#byId.values()];
    this.#byId.clear();
    for (const s of open) s.release();
    await Promise.all(open.map((s) => s.server.close().catch(this.#report)));
  }

  /**
   * Claims a slot for `keyHash` now (no `await` before it): from the free room, else from an
   * unproven session, else from the largest holder when this key holds fewer; or says why not.
   */
  #claim(keyHash: string): PoolRefusal | undefined {
    let refusal = this.#shares.take(keyHash);
    if (refusal?.bound !== "total") return refusal;
    if (this.#evictUnproven() || this.#evictFromLargest(keyHash)) refusal = this.#shares.take(keyHash);
    return refusal;
  }

  async #open(request: Request, engine: E, options: HandleRequestOptions): Promise<Response> {
    const { keyHash } = engine;
    const refusal = this.#claim(keyHash);
    if (refusal !== undefined) {
      const limit = refusal.bound === "share" ? "sessionsPerKey" : "sessions";
      this.#log?.note(limit, sourceOfKey(keyHash), `refused a session: ${limit} ${refusal.limit} reached`);
      return refusedOpen(refusal);
    }
    const here = once(() => this.#shares.give(keyHash));
    // The process's slot is held while every replica's count of this key is asked.
    const elsewhere = await this.#deployment?.claim(keyHash).catch(() => undefined);
    if (elsewhere !== undefined) {
      here();
      this.#log?.note(
        "sessionsPerKey",
        sourceOfKey(keyHash),
        `refused a session: sessionsPerKey ${elsewhere.limit} reached on all replicas together`,
      );
      return refusedOpen(elsewhere, " on all replicas together");
    }
    const release = once(() => {
      here();
      void this.#deployment?.release(keyHash);
    });
    let session: Session | undefined;
    try {
      const delivery = new SessionChannel();
      const server = await this.#create(engine, delivery);
      const opened: Session = {
        server,
        keyHash,
        delivery,
        lastSeen: Date.now(),
        proven: false,
        release,
        transport: new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          maxRequestBodySize: MAX_BODY_BYTES,
          onsessioninitialized: (id) => {
            this.#byId.set(id, opened);
          },
          onsessionclosed: (id) => {
            if (this.#byId.get(id) === opened) this.#byId.delete(id);
            release();
          },
        }),
      };
      session = opened;
      opened.transport.onclose = () => {
        const id = opened.transport.sessionId;
        if (id !== undefined && this.#byId.get(id) === opened) this.#byId.delete(id);
        release();
      };
      await server.connect(opened.transport);
      const response = await opened.transport.handleRequest(request, options);
      // An initialize the transport refused opened nothing: its slot goes back.
      if (opened.transport.sessionId === undefined || !this.#byId.has(opened.transport.sessionId)) {
        release();
        server.close().catch(this.#report);
      }
      return response;
    } catch (error) {
      release();
      session?.server.close().catch(this.#report);
      throw error;
    }
  }

  /** Closes the least recently used session that never made a successful call, if there is one. */
  #evictUnproven(): boolean {
    let oldest: [string, Session] | undefined;
    for (const entry of this.#byId) {
      if (!entry[1].proven && (oldest === undefined || entry[1].lastSeen < oldest[1].lastSeen))
        oldest = entry;
    }
    if (oldest === undefined) return false;
    this.#end(...oldest);
    return true;
  }

  /**
   * Closes the least recently used session of the key holding the most, when `keyHash` holds at
   * least two fewer (so two keys at par do not take turns evicting each other).
   */
  #evictFromLargest(keyHash: string): boolean {
    const top = this.#shares.largest();
    if (top === undefined || top[1] < this.#shares.heldBy(keyHash) + 2) return false;
    let oldest: [string, Session] | undefined;
    for (const entry of this.#byId) {
      if (entry[1].keyHash === top[0] && (oldest === undefined || entry[1].lastSeen < oldest[1].lastSeen))
        oldest = entry;
    }
    if (oldest === undefined) return false;
    this.#log?.note(
      "sessions",
      sourceOfKey(top[0]),
      "closed a session of the largest holder to admit another key",
    );
    this.#end(...oldest);
    return true;
  }

  #end(id: string, s: Session): void {
    this.#byId.delete(id);
    s.release();
    s.server.close().catch(this.#report);
  }
}
