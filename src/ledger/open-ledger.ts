/**
 * The idempotency ledger: one durable record per logical request, so a submission is never
 * charged twice and a result is never lost across retries, cancellations and crashes.
 * It knows nothing of HTTP or MCP: callers hand it the bytes and a `send` function.
 */

import { defaultStoreUri, parseStoreUri, type StoreLocation, StoreUriError } from "../config/store-uri.js";
import { lazy } from "../shared/lazy.js";
import { type DayBudget, DEFAULT_DAY_BUDGET } from "./day-budget.js";
import { LedgerImpl } from "./ledger.js";
import { LedgerError } from "./ledger-errors.js";
import type { Ledger } from "./ledger-types.js";
import { type BackoffOptions, DEFAULT_BACKOFF } from "./replay.js";
import type { LedgerStore } from "./store.js";
import { SqliteStore } from "./stores/sqlite.js";

export {
  defaultStoreUri,
  parseStoreUri,
  STORE_SCHEMES,
  type StoreLocation,
  StoreUriError,
} from "../config/store-uri.js";
export type { ErrorSummary } from "./error-summary.js";
export { hashKey } from "./identity.js";
export type { Counted, KeyedStore } from "./keyed-store.js";
export { IdempotencyConflictError, IdentifiedError, LedgerError } from "./ledger-errors.js";
export type { Ledger, ListOptions, Ref, RunRequest, RunResult, Send } from "./ledger-types.js";
export { type LedgerRecord, listCursor } from "./listing.js";
export { RECORD_STATES, type RecordState } from "./record.js";
export type { BackoffOptions } from "./replay.js";

export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface OpenLedgerOptions {
  /** `sqlite://PATH` (default: ledger.sqlite in the user's data directory) or postgres://… or redis://… (see docs/deploying.md#store-uris). */
  storeUri?: string;
  /** How long closed records and delivered successes are kept (default 7 days). */
  retentionMs?: number;
  now?: () => number;
  /** Replay waits (tests shorten them). */
  backoff?: Partial<BackoffOptions>;
  random?: () => number;
  /** How often expired records are swept while open (default: retention / 24, at most an hour). */
  sweepIntervalMs?: number;
  /** Each key's new records and bytes per UTC day (default DEFAULT_DAY_BUDGET; day-budget.ts). */
  dayBudget?: Partial<DayBudget>;
}

const postgresStore = lazy(() => import("./stores/postgres.js"));
const redisStore = lazy(() => import("./stores/redis.js"));

/**
 * Opens the store behind a URI: SQLite built in; PostgreSQL and Redis through their own modules,
 * loaded only for those URIs. Messages name the scheme only: a URI may carry a password.
 */
export async function openStore(uri: string): Promise<LedgerStore> {
  let location: StoreLocation;
  try {
    location = parseStoreUri(uri);
  } catch (cause) {
    if (cause instanceof StoreUriError) throw new LedgerError("LEDGER_CONFIG", cause.message, { cause });
    throw cause;
  }
  if (location.kind === "sqlite") return SqliteStore.open(uri);
  if (location.kind === "postgres") {
    const { PostgresStore } = await postgresStore();
    return PostgresStore.open(location.connection, location.durability);
  }
  const { RedisStore } = await redisStore();
  return RedisStore.open(location.connection, location.durability);
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
    dayBudget: { ...DEFAULT_DAY_BUDGET, ...o.dayBudget },
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
