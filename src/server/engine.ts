/**
 * Builds Engines: one per API key (stdio has one key; HTTP one per session key), all sharing one
 * ledger per process. The ledger (keyv + SQLite, a native module) opens on first use, not at
 * startup, so a client's first tools/list does not wait for it.
 */
import type { Config } from "../config.js";
import type { Ledger } from "../ledger/index.js";
import type { Sandbox } from "../sandbox/index.js";
import type { Engine } from "../tooling/context.js";

export interface Engines {
  /** The key of a session that brings none: GENERATION_API_KEY, or the sandbox's own key. */
  readonly defaultApiKey: string | undefined;
  /** The service's base address in use (the sandbox's when --sandbox). */
  readonly baseUrl: string;
  /** The engine for a key, built once per key and kept; validates the key's format. */
  forKey(apiKey: string): Engine;
  /** The engine of a key registered earlier through forKey, by its hash. */
  byHash(keyHash: string): Engine;
  /**
   * Opens the ledger (and loads an in-process sandbox) ahead of the first call that needs them, so
   * an unusable store is reported early and the first generation does not wait for SQLite.
   */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

export interface EngineOptions {
  /**
   * With --sandbox, start the sandbox now rather than on the first request, so its address is
   * known (and printed) from the start (HTTP mode, npm start).
   */
  listenSandbox?: boolean;
}

const SANDBOX_PLACEHOLDER_URL = "http://sandbox.invalid";
/** The sandbox's public SANDBOX_API_KEY, spelled out so stdio need not load the sandbox to know it (a test pins the two together). */
export const EMBEDDED_SANDBOX_KEY = `lgk_${"5a4d".repeat(16)}`;

export async function createEngines(config: Config, o: EngineOptions = {}): Promise<Engines> {
  // hashKey from record.js, not the ledger's index: the index pulls keyv and SQLite in.
  const [{ ServiceClient }, { hashKey }] = await Promise.all([
    import("../service/client.js"),
    import("../ledger/record.js"),
  ]);

  let baseUrl = config.baseUrl;
  let defaultApiKey = config.apiKey;
  let fetchImpl: typeof fetch | undefined;
  let warmSandbox: (() => Promise<unknown>) | undefined;
  let closeSandbox: (() => Promise<void>) | undefined;
  if (config.sandbox) {
    // The embedded sandbox always listens on loopback, so the signed output URLs it hands out
    // are real ones people and other programs can open.
    let sandbox: Sandbox | undefined;
    let closeListener: (() => Promise<void>) | undefined;
    let started: Promise<string> | undefined;
    const start = () => {
      started ??= (async () => {
        const { createSandbox } = await import("../sandbox/index.js");
        sandbox = createSandbox({ timeScale: 1 });
        const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
        closeListener = listening.close;
        return listening.url;
      })();
      return started;
    };
    closeSandbox = async () => {
      await started?.catch(() => {});
      await closeListener?.();
      await sandbox?.close();
    };
    defaultApiKey = EMBEDDED_SANDBOX_KEY;
    if (o.listenSandbox) {
      baseUrl = await start();
    } else {
      // Started on the first request: the sandbox's media encoders are a good part of a cold start
      // otherwise. Until then its address is unknown, so the client addresses a placeholder origin
      // that is mapped to the listener.
      fetchImpl = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        if (url.origin !== SANDBOX_PLACEHOLDER_URL) return fetch(input, init);
        const target = new URL(url.pathname + url.search, await start());
        return fetch(input instanceof Request ? new Request(target, input) : target, init);
      }) as typeof fetch;
      baseUrl = SANDBOX_PLACEHOLDER_URL;
      warmSandbox = start;
    }
  }
  if (baseUrl === undefined) throw new Error("no service base URL: set GENERATION_BASE_URL or use --sandbox");
  const serviceUrl = baseUrl;

  const ledger = new LazyLedger(async () => {
    const { openLedger } = await import("../ledger/index.js");
    return openLedger({ storeUri: config.store });
  });

  const engines = new Map<string, Engine>();
  return {
    defaultApiKey,
    baseUrl: serviceUrl,
    forKey(apiKey) {
      const keyHash = hashKey(apiKey);
      const known = engines.get(keyHash);
      if (known !== undefined) return known;
      const client = new ServiceClient({
        baseUrl: serviceUrl,
        apiKey,
        ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }),
      });
      const engine: Engine = { config, client, ledger, keyHash };
      engines.set(keyHash, engine);
      return engine;
    },
    byHash(keyHash) {
      const engine = engines.get(keyHash);
      if (engine === undefined)
        throw new Error("no engine for this key hash; register the key with forKey first");
      return engine;
    },
    async warmUp() {
      await Promise.all([ledger.open(), warmSandbox?.()]);
    },
    async close() {
      await ledger.close();
      await closeSandbox?.();
    },
  };
}

/** A Ledger that opens the real one on first use; a failed open is retried on the next call. */
class LazyLedger implements Ledger {
  private opening: Promise<Ledger> | undefined;
  private opened: Ledger | undefined;
  constructor(private readonly opener: () => Promise<Ledger>) {}

  /** Opens the real ledger now (idempotent). */
  async open(): Promise<void> {
    await this.get();
  }

  private get(): Promise<Ledger> {
    if (this.opening === undefined) {
      this.opening = this.opener().then(
        (ledger) => {
          this.opened = ledger;
          return ledger;
        },
        (error: unknown) => {
          this.opening = undefined;
          throw error;
        },
      );
    }
    return this.opening;
  }

  get recovered(): Ledger["recovered"] {
    return this.opened?.recovered ?? [];
  }

  get description(): string {
    return this.opened?.description ?? "not opened yet (opens on first use)";
  }

  run: Ledger["run"] = async (req, send, ref) => (await this.get()).run(req, send, ref);
  markDelivered: Ledger["markDelivered"] = async (keyHash, identity, delivered) =>
    (await this.get()).markDelivered(keyHash, identity, delivered);
  list: Ledger["list"] = async (keyHash, o) => (await this.get()).list(keyHash, o);
  noteSeen: Ledger["noteSeen"] = async (keyHash, taskId, seen) =>
    (await this.get()).noteSeen(keyHash, taskId, seen);
  taskOrigin: Ledger["taskOrigin"] = async (keyHash, taskId) =>
    (await this.get()).taskOrigin(keyHash, taskId);
  durations: Ledger["durations"] = async (keyHash, model, limit) =>
    (await this.get()).durations(keyHash, model, limit);

  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    this.opened = undefined;
    if (opening !== undefined) await (await opening.catch(() => undefined))?.close();
  }
}
