/**
 * rate-limiter-flexible's store limiter over the ledger's own store (keyed-store.ts `count`), so
 * every replica on one store counts against one total: one atomic statement on SQLite (the
 * ledger's file through node:sqlite) and PostgreSQL (INSERT … ON CONFLICT DO UPDATE … RETURNING),
 * one Lua script on Redis. The library's own store limiters were not used: RateLimiterSQLite
 * drives only the sqlite3 and better-sqlite3 modules (native builds this project does without;
 * node:sqlite has no `transaction()` for its better-sqlite3 path), and RateLimiterPostgres and
 * RateLimiterRedis would need the store's raw client and a table of their own beside the ledger's.
 * Subclassing its RateLimiterStoreAbstract (the class its own store limiters extend) keeps its
 * window, block and insurance logic: while the store does not answer within STORE_TIMEOUT_MS,
 * each replica counts in memory (RateLimiterMemory, the same figures) until it answers again.
 * docs/security.md says why, and what the fallback allows.
 */
import {
  type IRateLimiterStoreOptions,
  RateLimiterMemory,
  RateLimiterRes,
  RateLimiterSQLite,
  type RateLimiterStoreAbstract,
} from "rate-limiter-flexible";
import type { Counted, KeyedStore } from "../../ledger/open-ledger.js";

// The package exports the class's type but not the class: it is the parent of its store limiters.
const StoreAbstract = Object.getPrototypeOf(RateLimiterSQLite) as new (
  opts: IRateLimiterStoreOptions,
) => RateLimiterStoreAbstract;

/**
 * A store slower than this counts as down: the request is counted in memory instead. Generous, as
 * SQLite under a burst queues its writes (each one synced) behind the ledger's.
 */
export const STORE_TIMEOUT_MS = 3_000;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the store did not answer within ${ms} ms`)), ms);
    timer.unref();
    work.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/** The hooks RateLimiterStoreAbstract calls (its own store limiters implement the same four). */
class KeyedStoreLimiter extends StoreAbstract {
  readonly #kv: KeyedStore;

  constructor(kv: KeyedStore, opts: Omit<IRateLimiterStoreOptions, "storeClient">) {
    super({ ...opts, storeClient: kv });
    this.#kv = kv;
  }

  /** Adds points in the key's window; `forceExpire` (set, block: unused here) starts a new one. */
  async _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<Counted> {
    if (forceExpire) await withTimeout(this.#kv.delete(rlKey), STORE_TIMEOUT_MS);
    return withTimeout(this.#kv.count(rlKey, points, msDuration), STORE_TIMEOUT_MS);
  }

  async _get(rlKey: string): Promise<Counted | null> {
    const now = await withTimeout(this.#kv.count(rlKey, 0, 1), STORE_TIMEOUT_MS);
    return now.expiresAt > Date.now() && now.points > 0 ? now : null;
  }

  async _delete(rlKey: string): Promise<boolean> {
    await withTimeout(this.#kv.delete(rlKey), STORE_TIMEOUT_MS);
    return true;
  }

  _getRateLimiterRes(_rlKey: string, changedPoints: number, result: Counted): RateLimiterRes {
    const points = (this as unknown as { points: number }).points;
    return new RateLimiterRes(
      Math.max(points - result.points, 0),
      Math.max(result.expiresAt - Date.now(), 0),
      result.points,
      result.points === changedPoints,
    );
  }
}

export interface Window {
  /** Points a key may consume in one window. */
  points: number;
  /** The window, in seconds. */
  seconds: number;
}

export type Limiter = Pick<RateLimiterMemory, "consume" | "get">;

/** A limiter counting in the shared store (in this process's memory while the store is down). */
export function storeLimiter(kv: KeyedStore | undefined, keyPrefix: string, w: Window): Limiter {
  const opts = { keyPrefix, points: w.points, duration: w.seconds };
  const memory = new RateLimiterMemory(opts);
  if (kv === undefined) return memory;
  return new KeyedStoreLimiter(kv, { ...opts, insuranceLimiter: memory }) as unknown as Limiter;
}
