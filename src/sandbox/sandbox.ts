/**
 * The sandbox: the whole service (docs/service.md) simulated in-process, for trying every tool with no
 * key and no cost, and for end-to-end tests against a real HTTP backend.
 *
 * - `SANDBOX_API_KEY` is a fixed, public key with both scopes and a generous cap; `addKey` makes
 *   keys with chosen scopes, caps and balances.
 * - Tasks move queued -> processing -> terminal on the sandbox clock (image ~3 s, video ~10 s,
 *   audio ~4-5 s at timeScale 1); `advance(ms)` moves the clock for tests.
 * - Prompt markers (SANDBOX_MARKERS): `[sandbox:fail]`, `[sandbox:partial]`, `[sandbox:slow]`
 *   for media; `[sandbox:analysis-failed]` for extraction.
 * - Faults (`faults.inject`) and `stats` let tests prove retries never dispatch twice.
 */
import { createHash, randomUUID } from "node:crypto";
import { AssetStore } from "./assets.js";
import { Clock } from "./clock.js";
import { type Fault, FaultTable, Stats } from "./faults.js";
import { IdempotencyStore } from "./idempotency.js";
import { type JournalEntry, type OpenedJournal, openJournal } from "./journal.js";
import { KeyStore, type Scope } from "./keys.js";
import { route } from "./router.js";
import { ConnectionReset, errorResponse } from "./sandbox-errors.js";
import { listenHttp } from "./sandbox-http.js";
import { SANDBOX_API_KEY } from "./sandbox-key.js";
import type { SandboxState } from "./state.js";
import { TaskStore } from "./tasks.js";
import { VoiceStore } from "./voices.js";

export { SANDBOX_EXTRACTION_MODEL } from "./extract.js";
export type { Fault } from "./faults.js";
export { SANDBOX_MARKERS } from "./tasks.js";

export { SANDBOX_API_KEY };

export interface SandboxOptions {
  /** Origin for signed file URLs; by default the origin each request arrived on. */
  publicBaseUrl?: string;
  /** Sandbox seconds per real second (default 1). */
  timeScale?: number;
  now?: () => number;
  /** Makes ids and URL signatures reproducible. */
  seed?: string;
  /**
   * A journal file (journal.ts): the requests of the public sandbox key that changed the state
   * are appended to it and replayed at start, so the sandbox's tasks, assets and voices outlive
   * a restart. A journal another live process holds is left alone (`onJournal` says so).
   */
  journal?: string;
  onJournal?: (note: string) => void;
}

export interface Sandbox {
  fetch(request: Request): Promise<Response>;
  handler: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /**
   * One request as a listener serves it: errors propagate (a ConnectionReset fault must destroy
   * the socket, as listenHttp does), unlike `fetch`, which answers as a client would see them.
   */
  serve(request: Request): Promise<Response>;
  listen(o?: { port?: number; host?: string }): Promise<{ url: string; close(): Promise<void> }>;
  addKey(o: { scopes?: Scope[]; capGems?: number; balanceGems?: number }): string;
  /** Revokes a key: every later request with it, replays included, gets 401 INVALID_API_KEY. */
  revokeKey(key: string): boolean;
  faults: { inject(route: string, fault: Fault, times?: number): void; clear(): void };
  stats: { dispatches(route?: string): number; requests(route?: string): number };
  advance(ms: number): void;
  close(): Promise<void>;
}

export function createSandbox(o: SandboxOptions = {}): Sandbox {
  const journal = openKept(o);
  const seed = journal?.seed ?? o.seed ?? randomUUID();
  const counters = new Map<string, number>();
  const nextId = (prefix: string): string => {
    const n = (counters.get(prefix) ?? 0) + 1;
    counters.set(prefix, n);
    return `${prefix}${createHash("sha256").update(`${seed}:${prefix}:${n}`).digest("hex").slice(0, 20)}`;
  };
  const assets = new AssetStore(createHash("sha256").update(`url-secret:${seed}`).digest("hex"), () =>
    nextId("ast_"),
  );
  const closing = new AbortController();
  const s: SandboxState = {
    clock: new Clock(o.now, o.timeScale ?? 1),
    keys: new KeyStore(),
    assets,
    tasks: new TaskStore(assets, () => nextId("task_")),
    voices: new VoiceStore(() => nextId("voice_own_")),
    idem: new IdempotencyStore(),
    faults: new FaultTable(),
    stats: new Stats(),
    nextId,
    publicBaseUrl: o.publicBaseUrl?.replace(/\/+$/, ""),
    closing: closing.signal,
  };
  s.keys.add({ secret: SANDBOX_API_KEY, capGems: 1_000_000, balanceGems: 10_000_000 });

  const servers = new Set<{ close(): Promise<void> }>();
  const replayed = journal === undefined ? Promise.resolve() : replay(s, journal.entries);
  const routed = async (request: Request): Promise<Response> => {
    await replayed;
    if (journal === undefined || !journaled(request)) return route(s, request);
    const at = s.clock.now();
    const body = Buffer.from(await request.clone().arrayBuffer()).toString("base64");
    const response = await route(s, request);
    if (response.ok) journal.append(entryOf(request, at, body));
    return response;
  };
  const fetchCore = async (request: Request): Promise<Response> => {
    try {
      return await routed(request);
    } catch (e) {
      if (e instanceof ConnectionReset) throw new TypeError("fetch failed", { cause: e });
      // An abort or a closing sandbox ends the exchange like a dropped connection; anything else
      // is a sandbox bug, answered as the service would: a 500 in the envelope.
      if (request.signal.aborted || closing.signal.aborted) throw e;
      console.error("sandbox: internal error", e);
      return errorResponse(500, "Sandbox internal error.");
    }
  };
  return {
    fetch: fetchCore,
    handler: (input, init) => fetchCore(new Request(input, init)),
    serve: routed,
    async listen(lo = {}) {
      const server = await listenHttp(routed, lo);
      servers.add(server);
      return {
        url: server.url,
        close: async () => {
          servers.delete(server);
          await server.close();
        },
      };
    },
    addKey: (k) => s.keys.add(k),
    revokeKey: (k) => s.keys.revoke(k),
    faults: { inject: (r, f, times) => s.faults.inject(r, f, times), clear: () => s.faults.clear() },
    stats: { dispatches: (r) => s.stats.dispatches(r), requests: (r) => s.stats.requests(r) },
    advance: (ms) => s.clock.advance(ms),
    async close() {
      closing.abort(new Error("sandbox closed"));
      await Promise.all([...servers].map((x) => x.close()));
      servers.clear();
      journal?.close();
    },
  };
}

function openKept(o: SandboxOptions): OpenedJournal | undefined {
  if (o.journal === undefined) return undefined;
  try {
    return openJournal(o.journal, o.seed ?? randomUUID());
  } catch (err) {
    o.onJournal?.(`the sandbox keeps no journal: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

const JOURNALED =
  /^\/api\/generate\/(?:image|video|audio|assets|voices|extract\/video|text\/v1\/chat\/completions)$/;

/** A request that changes the sandbox, under its public key: what the journal keeps. */
function journaled(request: Request): boolean {
  if (request.method !== "POST") return false;
  if (request.headers.get("authorization") !== `Bearer ${SANDBOX_API_KEY}`) return false;
  return JOURNALED.test(new URL(request.url).pathname);
}

function entryOf(request: Request, at: number, body: string): JournalEntry {
  const idempotencyKey = request.headers.get("idempotency-key");
  const contentType = request.headers.get("content-type");
  return {
    at,
    method: request.method,
    path: new URL(request.url).pathname,
    ...(idempotencyKey === null ? {} : { idempotencyKey }),
    ...(contentType === null ? {} : { contentType }),
    body,
  };
}

/** The journal's requests again, each at its own sandbox time; their answers are not needed. */
async function replay(s: SandboxState, entries: JournalEntry[]): Promise<void> {
  for (const e of entries) {
    const headers: Record<string, string> = { authorization: `Bearer ${SANDBOX_API_KEY}` };
    if (e.idempotencyKey !== undefined) headers["idempotency-key"] = e.idempotencyKey;
    if (e.contentType !== undefined) headers["content-type"] = e.contentType;
    s.clock.pin(e.at);
    try {
      await route(
        s,
        new Request(`http://sandbox.journal${e.path}`, {
          method: e.method,
          headers,
          body: Buffer.from(e.body, "base64"),
        }),
      );
    } catch {
      // As it failed then (or fails now): the state it left is the state the journal gives.
    } finally {
      s.clock.pin(undefined);
    }
  }
  s.stats = new Stats();
}

/** `generation-mcp sandbox --port P`: the simulated service alone, over HTTP. */
export async function runSandboxServer(
  o: { port?: number; host?: string; timeScale?: number; out?: (line: string) => void } = {},
): Promise<{ url: string; sandbox: Sandbox; close(): Promise<void> }> {
  const sandbox = createSandbox(o.timeScale !== undefined ? { timeScale: o.timeScale } : {});
  const listenOpts: { port?: number; host?: string } = {};
  if (o.port !== undefined) listenOpts.port = o.port;
  if (o.host !== undefined) listenOpts.host = o.host;
  const server = await sandbox.listen(listenOpts);
  const out = o.out ?? (() => {});
  out(`Sandbox service listening at ${server.url}`);
  out(`GENERATION_BASE_URL=${server.url}`);
  out(`GENERATION_API_KEY=${SANDBOX_API_KEY}  (the public sandbox key; it costs nothing)`);
  return { url: server.url, sandbox, close: () => sandbox.close() };
}
