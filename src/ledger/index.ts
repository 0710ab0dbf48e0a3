/**
 * The idempotency ledger: one durable record per logical request, so a submission is never
 * charged twice and a result is never lost across retries, cancellations and crashes.
 * It knows nothing of HTTP or MCP: callers hand it the bytes and a `send` function.
 */
import Keyv from "keyv";
import { LedgerImpl } from "./ledger.js";
import { LedgerError } from "./record.js";
import { type BackoffOptions, DEFAULT_BACKOFF } from "./replay.js";
import { SqliteStore } from "./sqlite.js";
import { KeyvStore, type LedgerStore, NAMESPACE } from "./store.js";
import type { Ledger } from "./types.js";
import { defaultStoreUri, parseStoreUri, type StoreLocation, StoreUriError } from "./uri.js";

export {
  type ErrorSummary,
  hashKey,
  IdempotencyConflictError,
  IdentifiedError,
  LedgerError,
  type LedgerRecord,
  listCursor,
  RECORD_STATES,
  type RecordState,
} from "./record.js";
export type { BackoffOptions } from "./replay.js";
export type { Ledger, ListOptions, Ref, RunRequest, RunResult, Send } from "./types.js";
export { defaultStoreUri, parseStoreUri, STORE_SCHEMES, type StoreLocation, StoreUriError } from "./uri.js";

export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface OpenLedgerOptions {
  /** `sqlite://PATH` (default: ledger.sqlite in the user's data directory) or another keyv URI. */
  storeUri?: string;
  /** How long closed records and delivered successes are kept (default 7 days). */
  retentionMs?: number;
  now?: () => number;
  /** Replay waits (tests shorten them). */
  backoff?: Partial<BackoffOptions>;
  random?: () => number;
  /** How often expired records are swept while open (default: retention / 24, at most an hour). */
  sweepIntervalMs?: number;
}

/** keyv adapters of the shared stores; optional packages, installed by whoever wants them. */
const ADAPTERS = { postgres: "@keyv/postgres", redis: "@keyv/redis" } as const;

/** Opens the store behind a URI. Messages name the scheme only: a URI may carry a password. */
export async function openStore(uri: string): Promise<LedgerStore> {
  let location: StoreLocation;
  try {
    location = parseStoreUri(uri);
  } catch (cause) {
    if (cause instanceof StoreUriError) throw new LedgerError("LEDGER_CONFIG", cause.message, { cause });
    throw cause;
  }
  if (location.kind === "sqlite") return SqliteStore.open(uri);
  const { scheme } = location;
  const pkg = ADAPTERS[location.kind];
  let mod: { default?: unknown; [k: string]: unknown };
  try {
    mod = (await import(pkg)) as typeof mod;
  } catch (cause) {
    const missing = (cause as { code?: unknown } | null)?.code === "ERR_MODULE_NOT_FOUND";
    throw new LedgerError(
      "LEDGER_CONFIG",
      missing
        ? `store URI: ${scheme}:// needs the keyv adapter ${pkg}, which is not installed (npm install ${pkg})`
        : `store URI: the keyv adapter ${pkg} could not be loaded`,
      { cause },
    );
  }
  const Adapter = mod.default as (new (uri: string) => object) | undefined;
  if (typeof Adapter !== "function") {
    throw new LedgerError("LEDGER_CONFIG", `store URI: ${pkg} has no default export to construct`);
  }
  let adapter: object;
  try {
    adapter = new Adapter(location.connection);
  } catch (cause) {
    // The adapter's own message may quote the URI, password included: keep it only as the cause.
    throw new LedgerError("LEDGER_CONFIG", `store URI: ${pkg} refused the ${scheme}:// URI`, {
      cause,
    });
  }
  const keyv = new Keyv({
    store: adapter,
    namespace: NAMESPACE,
    serialize: (d: unknown) => JSON.stringify(d),
    deserialize: (d: string) => JSON.parse(d),
    throwOnErrors: true,
  });
  keyv.on("error", () => {});
  const store = new KeyvStore(keyv, `${scheme} via ${pkg} (claims atomic within one process only)`);
  try {
    await store.probe();
  } catch (cause) {
    await store.close().catch(() => {});
    throw new LedgerError("LEDGER_UNAVAILABLE", `store URI: cannot write to the ${scheme} store`, {
      cause,
    });
  }
  return store;
}

/** Opens the ledger, checks it is durable and writable, lists open records, sweeps expired ones. */
export async function openLedger(o: OpenLedgerOptions = {}): Promise<Ledger> {
  const retentionMs = o.retentionMs ?? DEFAULT_RETENTION_MS;
  if (!Number.isFinite(retentionMs) || retentionMs < 0) {
    throw new LedgerError("LEDGER_CONFIG", "retentionMs must be a non-negative number of milliseconds");
  }
  const store = await openStore(o.storeUri ?? defaultStoreUri());
  const ledger = new LedgerImpl(store, {
    retentionMs,
    now: o.now ?? Date.now,
    backoff: { ...DEFAULT_BACKOFF, ...o.backoff },
    random: o.random ?? Math.random,
  });
  try {
    await ledger.sweep();
    await ledger.recover();
  } catch (cause) {
    await store.close().catch(() => {});
    throw cause instanceof LedgerError
      ? cause
      : new LedgerError("LEDGER_UNAVAILABLE", "cannot read the ledger", { cause });
  }
  const every = o.sweepIntervalMs ?? Math.min(Math.max(retentionMs / 24, 1000), 3_600_000);
  ledger.sweepEvery(every);
  return ledger;
}
