/**
 * 2025-era sessions (2025-11-25 and older revisions): the `initialize` request opens a session
 * bound to the key it came with, served by one server over that key's engine (the one the request
 * was given where its key was checked); every later request on it must carry the same key. Each
 * exchange hands the session its delivery channel, for the tool calls it carries.
 *
 * Nobody can lock others out by opening sessions: each key hash has its own cap, and a session
 * that has not yet answered a successful tool call (its key may be one the service never
 * accepted) idles out after minutes, not an hour, and is the first to make room when the table is
 * full.
 */
import { randomUUID } from "node:crypto";
import {
  type HandleRequestOptions,
  isInitializeRequest,
  type McpServer,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { type Channel, type DeliveryChannel, SessionChannel } from "../mcp/delivery.js";
import { MAX_BODY_BYTES } from "./http-guard.js";

/**
 * Sessions open at once: room for a thousand users with a few each (hosts open one per
 * conversation), about 50 KiB of memory each while idle (npm run bench, part h), so some 200 MiB
 * at the cap.
 */
export const MAX_SESSIONS = 4_000;
export const MAX_SESSIONS_PER_KEY = 100;
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

function jsonResponse(status: number, message: string): Response {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null });
  return new Response(body, { status, headers: { "content-type": "application/json" } });
}

export class Sessions<E extends Keyed> {
  readonly #byId = new Map<string, Session>();
  readonly #limits: SessionLimits;
  readonly #create: ServerFactory<E>;
  readonly #report: (error: unknown) => void;

  constructor(
    create: ServerFactory<E>,
    report: (error: unknown) => void,
    limits: Partial<SessionLimits> = {},
  ) {
    this.#create = create;
    this.#report = report;
    this.#limits = { ...DEFAULT_LIMITS, ...limits };
  }

  get size(): number {
    return this.#byId.size;
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
    if (session === undefined) return jsonResponse(404, "Session not found; initialize a new one");
    // The session is the key's: another key (even a valid one) must not ride on it.
    if (session.keyHash !== engine.keyHash)
      return jsonResponse(403, "Forbidden: this session was opened with another key");
    session.lastSeen = Date.now();
    session.delivery.carry(channel, parsedBody);
    return session.transport.handleRequest(request, options);
  }

  /** A tool call on this session succeeded: its key is one the service accepts. */
  prove(id: string | null): void {
    const session = id === null ? undefined : this.#byId.get(id);
    if (session !== undefined) session.proven = true;
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
    await Promise.all(open.map((s) => s.server.close().catch(this.#report)));
  }

  async #open(request: Request, engine: E, options: HandleRequestOptions): Promise<Response> {
    const { keyHash } = engine;
    let mine = 0;
    for (const s of this.#byId.values()) if (s.keyHash === keyHash) mine++;
    if (mine >= this.#limits.maxPerKey) {
      return jsonResponse(
        503,
        `Too many open sessions for this key (${this.#limits.maxPerKey}); close one (DELETE) and retry`,
      );
    }
    if (this.#byId.size >= this.#limits.maxSessions && !this.#evictUnproven()) {
      return jsonResponse(503, "Too many open sessions; close one and retry");
    }
    const delivery = new SessionChannel();
    const server = await this.#create(engine, delivery);
    const session: Session = {
      server,
      keyHash,
      delivery,
      lastSeen: Date.now(),
      proven: false,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        maxRequestBodySize: MAX_BODY_BYTES,
        onsessioninitialized: (id) => {
          this.#byId.set(id, session);
        },
        onsessionclosed: (id) => {
          this.#byId.delete(id);
        },
      }),
    };
    session.transport.onclose = () => {
      const id = session.transport.sessionId;
      if (id !== undefined && this.#byId.get(id) === session) this.#byId.delete(id);
    };
    await server.connect(session.transport);
    return session.transport.handleRequest(request, options);
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

  #end(id: string, s: Session): void {
    this.#byId.delete(id);
    s.server.close().catch(this.#report);
  }
}
