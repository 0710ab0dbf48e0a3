/**
 * Builds Engines: one per API key (stdio has one key; HTTP one per session key), all sharing one
 * ledger per process. The ledger (keyv + SQLite, a native module) opens on first use, not at
 * startup, so a client's first tools/list does not wait for it.
 */
import type { Config } from "../config.js";
import type { Ledger } from "../ledger/index.js";
import type { Sandbox } from "../sandbox/index.js";
import type { Engine } from "./context.js";

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
   * With --sandbox, listen the sandbox on a loopback port instead of calling it in-process, so the
   * signed URLs it hands out can be opened by people and other programs (HTTP mode, npm start).
   */
  listenSandbox?: boolean;
}

const IN_PROCESS_SANDBOX_URL = "http://sandbox.invalid";
/** The sandbox's public SANDBOX_API_KEY, spelled out so stdio need not load the sandbox to know it (a test pins the two together). */
export const IN_PROCESS_SANDBOX_KEY = `lgk_${"5a4d".repeat(16)}`;

export async function createEngines(config: Config, o: EngineOptions = {}): Promise<Engines> {
  // hashKey from record.js, not the ledger's index: the index pulls keyv and SQLite in.
  const [{ ServiceClient }, { hashKey }] = await Promise.all([
    import("../service/client.js"),
    import("../ledger/record.js"),
  ]);

  let sandbox: Promise<Sandbox> | undefined;
  let closeListener: (() => Promise<void>) | undefined;
  let baseUrl = config.baseUrl;
  let defaultApiKey = config.apiKey;
  let fetchImpl: typeof fetch | undefined;
  let warmSandbox: (() => Promise<unknown>) | undefined;
  if (config.sandbox && o.listenSandbox) {
    const { createSandbox, SANDBOX_API_KEY } = await import("../sandbox/index.js");
    const listened = createSandbox({ timeScale: 1 });
    sandbox = Promise.resolve(listened);
    const listening = await listened.listen({ host: "127.0.0.1", port: 0 });
    baseUrl = listening.url;
    closeListener = listening.close;
    defaultApiKey = SANDBOX_API_KEY;
  } else if (config.sandbox) {
    // Loaded, and listened on a loopback port, on the first request: the sandbox's media encoders
    // are a good part of a cold start otherwise. The client addresses a placeholder origin mapped
    // to that listener, so the signed output URLs in results are real ones a user can open.
    let started: Promise<string> | undefined;
    const start = () => {
      started ??= (async () => {
        const { createSandbox } = await import("../sandbox/index.js");
        const sb = createSandbox({ timeScale: 1 });
        sandbox = Promise.resolve(sb);
        const listening = await sb.listen({ host: "127.0.0.1", port: 0 });
        closeListener = listening.close;
        return listening.url;
      })();
      return started;
    };
    fetchImpl = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.origin !== IN_PROCESS_SANDBOX_URL) return fetch(input, init);
      const target = new URL(url.pathname + url.search, await start());
      return fetch(input instanceof Request ? new Request(target, input) : target, init);
    }) as typeof fetch;
    baseUrl = IN_PROCESS_SANDBOX_URL;
    defaultApiKey = IN_PROCESS_SANDBOX_KEY;
    warmSandbox = start;
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
      await closeListener?.();
      await (await sandbox)?.close();
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

  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    this.opened = undefined;
    if (opening !== undefined) await (await opening.catch(() => undefined))?.close();
  }
}
