/**
 * Builds Engines: one per API key (stdio has one key; HTTP one per request's key), all sharing one
 * ledger per process (a LazyLedger, opened on first use, made by `lazyLedger` so that OAuth's token
 * store can be opened from it before the engines exist) and one service target (the configured
 * service, or the embedded sandbox of sandbox-start.ts, listening on loopback from the start).
 * Each engine knows where its key came from and whether the service has refused it since.
 */

import { dirname, join } from "node:path";
import type { LRUCache } from "lru-cache";
import type { ModelList } from "../client/schemas.js";
import { ServiceError } from "../client/service-errors.js";
import type { Config } from "../config/index.js";
import { serveLimits } from "../config/serve-limits.js";
import { parseStoreUri } from "../config/store-uri.js";
import { LazyLedger } from "../ledger/lazy-ledger.js";
import { answerKey, approvalSecret } from "../mcp/answers.js";
import type { Engine, KeyOrigin } from "../mcp/context.js";
import { lazy } from "../shared/lazy.js";
import { mayQuoteKey, scrubKeyShapes } from "../shared/scrub.js";
import { EMBEDDED_SANDBOX_KEY, embeddedSandbox } from "./sandbox-start.js";

export { EMBEDDED_SANDBOX_KEY } from "./sandbox-start.js";

export interface Engines {
  /** The key of a session that brings none: GENERATION_API_KEY, or the sandbox's own key. */
  readonly defaultApiKey: string | undefined;
  /** The service's base address in use (the sandbox's when --sandbox). */
  readonly baseUrl: string;
  /** The engine for a key, made on first use and kept while used; validates the key's format. */
  forKey(apiKey: string): Engine;
  /** The engine kept for a key hash (marked as just used), or undefined when none is kept. */
  kept(keyHash: string): Engine | undefined;
  /**
   * Asks the service whether a key works (GET /api/generate/models, which needs the `read` scope),
   * through its engine: the sign-in page's check, and stdio's at start. A key it accepts is no
   * longer taken as refused.
   */
  checkKey(apiKey: string): Promise<KeyCheck>;
  /**
   * Opens the ledger (and loads an in-process sandbox) ahead of the first call that needs them, so
   * an unusable store is reported early and the first generation does not wait for SQLite.
   */
  warmUp(): Promise<void>;
  /** Removes the key of every engine kept (and anything shaped like a key) from a text: for log lines. */
  scrub(text: string): string;
  close(): Promise<void>;
}

export interface EngineOptions {
  /** The process's ledger (lazyLedger); one is made when none is given. */
  ledger?: LazyLedger;
  /** Told (by key hash) when the service refuses a key: --auth oauth ends the sign-ins over it. */
  onKeyRefused?: (keyHash: string) => void;
  /** The estimated memory the kept engines may take (default MAX_ENGINE_BYTES). */
  maxEngineBytes?: number;
  /** At most this many engines kept, besides the memory bound (tests; default none). */
  maxEngines?: number;
}

interface ServiceTarget {
  baseUrl: string;
  defaultApiKey: string | undefined;
  warmUp?: () => Promise<unknown>;
  close?: () => Promise<void>;
}

/** The configured service, or the embedded sandbox (bound now, loaded on its first request). */
async function serviceTarget(config: Config): Promise<ServiceTarget> {
  if (!config.sandbox) {
    if (config.baseUrl === undefined)
      throw new Error("no service base URL: set GENERATION_BASE_URL or use --sandbox");
    return { baseUrl: config.baseUrl, defaultApiKey: config.apiKey };
  }
  const store = parseStoreUri(config.store);
  const sandbox = await embeddedSandbox({
    // Beside a SQLite ledger, so a task resumed after a restart (docs/tasks.md) finds its work.
    ...(store.kind === "sqlite" ? { journal: join(dirname(store.path), "sandbox-journal.jsonl") } : {}),
    note: (line) => process.stderr.write(`generation-mcp: ${line}\n`),
  });
  return {
    baseUrl: sandbox.url,
    defaultApiKey: EMBEDDED_SANDBOX_KEY,
    warmUp: () => sandbox.load(),
    close: () => sandbox.close(),
  };
}

// Loaded when first needed: the engines' client with the first engines; the ledger's stores on the
// first paid call (or a warm-up); the MCP tasks' code only to stop the tasks at close.
const ledgerOpening = lazy(() => import("../ledger/open-ledger.js"));
const engineParts = lazy(() =>
  Promise.all([
    import("../client/service-client.js"),
    // hashKey from identity.ts, not the ledger's index: the index pulls the store modules in.
    import("../ledger/identity.js"),
    import("lru-cache"),
    import("../client/last-parse.js"),
  ]),
);
const mcpTaskRequests = lazy(() => import("../calls/mcp-task/mcp-task-requests.js"));

/** The process's one ledger, opened on first use (a store accepted below "durable" said once, at open). */
export function lazyLedger(config: Config): LazyLedger {
  return new LazyLedger(async () => {
    const { openLedger } = await ledgerOpening();
    const limits = serveLimits(config.serveLimits);
    const dayBudget = {
      records: limits.ledgerRecordsPerKeyDay,
      bytes: limits.ledgerMiBPerKeyDay * 1024 ** 2,
    };
    const opened = await openLedger({ storeUri: config.store, dayBudget });
    if (opened.durabilityNote !== undefined)
      process.stderr.write(`generation-mcp: WARNING: ${opened.durabilityNote}\n`);
    return opened;
  });
}

/**
 * Engines kept for reuse, bounded by their estimated memory, least recently used dropped first
 * (every use counts: a token check, a request's key): on HTTP anyone can present made-up keys, and
 * a cache without a bound would grow with each one. A bound by memory rather than by count keeps
 * an engine for every active user (64 MiB: about 16,000 users who uploaded nothing), so a thousand
 * users do not rebuild one on most requests (with --auth oauth, a store read and a decryption
 * each). A request or session holds the engine it was given, so a drop never fails one.
 */
export const MAX_ENGINE_BYTES = 64 * 1024 * 1024;
/**
 * An engine's own memory, rounded up from 3.3 KiB measured (docs/benchmarks.md): its client, its
 * key's scrubber, its state and cache entry;
 * the catalog's parse is shared. What its client learns of assets (asset-kinds.ts) is counted
 * on top, ASSET_BYTES each, re-estimated on each use.
 */
export const ENGINE_BYTES = 4 * 1024;
const ASSET_BYTES = 100;
const engineSize = (engine: Engine): number => ENGINE_BYTES + engine.client.assets.size * ASSET_BYTES;

/** Where the keys of this process's engines come from (what a refused key's next step names). */
function originOf(config: Config, apiKey: string): KeyOrigin {
  if (config.auth === "oauth" && config.transport === "http") return "sign-in";
  return config.transport === "stdio" || apiKey === config.apiKey ? "environment" : "header";
}

export async function createEngines(config: Config, o: EngineOptions = {}): Promise<Engines> {
  const [{ ServiceClient }, { hashKey }, { LRUCache }, { LastParse }] = await engineParts();
  const target = await serviceTarget(config);
  const ledger = o.ledger ?? lazyLedger(config);
  /** The size each kept engine was counted at, to count it again when its client learnt more. */
  const counted = new WeakMap<Engine, number>();
  const engines: LRUCache<string, Engine> = new LRUCache({
    maxSize: o.maxEngineBytes ?? MAX_ENGINE_BYTES,
    sizeCalculation: (engine) => {
      const size = engineSize(engine);
      counted.set(engine, size);
      return size;
    },
    ...(o.maxEngines === undefined ? {} : { max: o.maxEngines }),
  });
  /** A kept engine (marked as just used), counted again if its size grew since. */
  const keptEngine = (keyHash: string): Engine | undefined => {
    const engine = engines.get(keyHash);
    if (engine !== undefined && counted.get(engine) !== engineSize(engine)) {
      // lru-cache counts a value set again as it is only when it is another value.
      engines.delete(keyHash);
      engines.set(keyHash, engine);
    }
    return engine;
  };
  const catalog = new LastParse<ModelList>();
  // Seals the questions' requestState: from GENERATION_AUTH_SECRET, the same on every replica, when set.
  const sealing = answerKey(config.authSecret);
  // Seals spending approvals alike on every replica (src/calls/paid/approval.ts); without the
  // secret, approvals use one kept in the ledger's store.
  const approvalKey = approvalSecret(config.authSecret);

  /** Whether the service has refused each engine's key, until it accepts it again. */
  const refusals = new WeakMap<Engine, { refused: boolean }>();
  const make = (apiKey: string, keyHash: string): Engine => {
    const standing = { refused: false };
    const client = new ServiceClient({
      baseUrl: target.baseUrl,
      apiKey,
      catalog,
      onKeyRefused: () => {
        standing.refused = true;
        o.onKeyRefused?.(keyHash);
      },
    });
    const key = {
      origin: originOf(config, apiKey),
      get refused() {
        return standing.refused;
      },
    };
    const engine: Engine = { config, client, ledger, keyHash, key, answerKey: sealing, approvalKey };
    refusals.set(engine, standing);
    return engine;
  };

  const forKey = (apiKey: string): Engine => {
    const keyHash = hashKey(apiKey);
    const known = keptEngine(keyHash);
    if (known !== undefined) return known;
    const engine = make(apiKey, keyHash);
    engines.set(keyHash, engine);
    return engine;
  };

  return {
    defaultApiKey: target.defaultApiKey,
    baseUrl: target.baseUrl,
    forKey,
    kept: keptEngine,
    async checkKey(apiKey) {
      const engine = forKey(apiKey);
      try {
        await engine.client.listModels();
      } catch (error) {
        return { ok: false, code: error instanceof ServiceError ? error.code : "UNREACHABLE" };
      }
      const standing = refusals.get(engine);
      if (standing !== undefined) standing.refused = false;
      return { ok: true };
    },
    async warmUp() {
      await Promise.all([ledger.open(), target.warmUp?.()]);
    },
    scrub(text) {
      let out = scrubKeyShapes(text);
      // Thousands of engines may be kept: only a text that could quote a key is scrubbed by each.
      if (!mayQuoteKey(out)) return out;
      for (const engine of engines.values()) out = engine.client.scrub(out);
      return out;
    },
    async close() {
      // MCP tasks this process drives give up their leases first, so a restart takes them over at once.
      await (await mcpTaskRequests()).stopTasks();
      await ledger.close();
      await target.close?.();
    },
  };
}

/** What the service said of a key: usable, or the service's refusal code. */
export type KeyCheck = { ok: true } | { ok: false; code: string };
