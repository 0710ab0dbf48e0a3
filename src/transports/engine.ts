/**
 * Builds Engines: one per API key (stdio has one key; HTTP one per session key), all sharing one
 * ledger per process (a LazyLedger, opened on first use) and one service target (the configured
 * service, or the embedded sandbox of sandbox-start.ts, listening on loopback from the start).
 */

import { scrubKeyShapes } from "../client/scrub.js";
import type { Config } from "../config/index.js";
import { LazyLedger } from "../ledger/lazy-ledger.js";
import type { KeyedStore } from "../ledger/open-ledger.js";
import { answerKey } from "../mcp/answers.js";
import type { Engine } from "../mcp/context.js";
import { EMBEDDED_SANDBOX_KEY, embeddedSandbox } from "./sandbox-start.js";

export { EMBEDDED_SANDBOX_KEY } from "./sandbox-start.js";

export interface Engines {
  /** The key of a session that brings none: GENERATION_API_KEY, or the sandbox's own key. */
  readonly defaultApiKey: string | undefined;
  /** The service's base address in use (the sandbox's when --sandbox). */
  readonly baseUrl: string;
  /** The engine for a key, built once per key and kept; validates the key's format. */
  forKey(apiKey: string): Engine;
  /** The engine of a key registered earlier through forKey, by its hash. */
  byHash(keyHash: string): Engine;
  /** Whether an engine for this key hash is kept (registered through forKey, not yet dropped). */
  has(keyHash: string): boolean;
  /** The keyed values of the ledger's store (OAuth grants), opening the ledger if need be. */
  keyed(): Promise<KeyedStore>;
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
  /** Told (by key hash) when the service refuses a key: --auth oauth ends the grants over it. */
  onKeyRefused?: (keyHash: string) => void;
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
  const sandbox = await embeddedSandbox();
  return {
    baseUrl: sandbox.url,
    defaultApiKey: EMBEDDED_SANDBOX_KEY,
    warmUp: () => sandbox.load(),
    close: () => sandbox.close(),
  };
}

/**
 * Engines kept for reuse, least recently used dropped first: on HTTP anyone can present made-up
 * keys, and a cache without a bound would grow with each one. Live sessions keep their own engine.
 */
export const MAX_CACHED_ENGINES = 256;

export async function createEngines(config: Config, o: EngineOptions = {}): Promise<Engines> {
  // hashKey from identity.js, not the ledger's index: the index pulls the store modules in.
  const [{ ServiceClient }, { hashKey }] = await Promise.all([
    import("../client/service-client.js"),
    import("../ledger/identity.js"),
  ]);
  const target = await serviceTarget(config);
  const serviceUrl = target.baseUrl;

  const ledger = new LazyLedger(async () => {
    const { openLedger } = await import("../ledger/open-ledger.js");
    const opened = await openLedger({ storeUri: config.store });
    // A store accepted below "durable before the first byte" is said loudly, once, at open.
    if (opened.durabilityNote !== undefined)
      process.stderr.write(`generation-mcp: WARNING: ${opened.durabilityNote}\n`);
    return opened;
  });

  const engines = new Map<string, Engine>();
  // Seals the questions' requestState: from GENERATION_AUTH_SECRET, the same on every replica, when set.
  const sealing = answerKey(config.authSecret);
  return {
    defaultApiKey: target.defaultApiKey,
    baseUrl: serviceUrl,
    forKey(apiKey) {
      const keyHash = hashKey(apiKey);
      const known = engines.get(keyHash);
      if (known !== undefined) {
        // Map order is insertion order: re-inserting marks it most recently used.
        engines.delete(keyHash);
        engines.set(keyHash, known);
        return known;
      }
      const client = new ServiceClient({
        baseUrl: serviceUrl,
        apiKey,
        ...(o.onKeyRefused === undefined ? {} : { onKeyRefused: () => o.onKeyRefused?.(keyHash) }),
      });
      const engine: Engine = { config, client, ledger, keyHash, answerKey: sealing };
      engines.set(keyHash, engine);
      if (engines.size > MAX_CACHED_ENGINES) {
        const oldest = engines.keys().next().value;
        if (oldest !== undefined) engines.delete(oldest);
      }
      return engine;
    },
    byHash(keyHash) {
      const engine = engines.get(keyHash);
      if (engine === undefined)
        throw new Error("no engine for this key hash; register the key with forKey first");
      return engine;
    },
    has: (keyHash) => engines.has(keyHash),
    keyed: () => ledger.keyed(),
    async warmUp() {
      await Promise.all([ledger.open(), target.warmUp?.()]);
    },
    scrub(text) {
      let out = scrubKeyShapes(text);
      for (const engine of engines.values()) out = engine.client.scrub(out);
      return out;
    },
    async close() {
      // MCP tasks this process drives give up their leases first, so a restart takes them over at once.
      await (await import("../surface/mcp-tasks.js")).stopTasks();
      await ledger.close();
      await target.close?.();
    },
  };
}
