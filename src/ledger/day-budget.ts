/**
 * Each key's budget of new ledger records and their bytes per UTC day, counted in the ledger's own
 * store (keyed-store.ts: `day:<key hash>:<date>`), so every replica on the store counts the same
 * day. A call past it is refused before its claim: nothing is sent or stored. The check is a read;
 * the count is written once a new record's send settled (its answer written), off the call's path,
 * so a burst may pass the bound by the calls in flight at once (themselves bounded: docs/security.md's pools) and no paid
 * call waits for a second durable write. The count is written `deferred` (SQLite: committed without
 * a sync of its own, made durable by the next claim's synced commit): a count lost to a crash of the
 * machine only lets the key store a few more records that day, and node:sqlite's commits run on the
 * event loop's thread, where a synced one would hold the call's request or its answer for a flush.
 */
import type { KeyedStore } from "./keyed-store.js";
import { LedgerError } from "./ledger-errors.js";

export interface DayBudget {
  /** New records one key may create per UTC day. */
  records: number;
  /** Bytes of request bodies those records may hold. */
  bytes: number;
}

export const DEFAULT_DAY_BUDGET: Readonly<DayBudget> = { records: 20_000, bytes: 2 * 1024 ** 3 };

const DAY_MS = 24 * 60 * 60 * 1000;
/** A day's count outlives its day a little, for clocks that differ between replicas. */
const COUNT_TTL_MS = 2 * DAY_MS;
const MAX_TRIES = 8;

/** The last UTC day's date, kept: formatting a Date costs more than the rest of the check. */
let lastDay = { index: Number.NaN, date: "" };

const dayKey = (keyHash: string, now: number): string => {
  const index = Math.floor(now / DAY_MS);
  if (index !== lastDay.index) lastDay = { index, date: new Date(now).toISOString().slice(0, 10) };
  return `day:${keyHash}:${lastDay.date}`;
};

function parse(text: string | undefined): DayBudget {
  if (text === undefined) return { records: 0, bytes: 0 };
  const v = JSON.parse(text) as Partial<DayBudget>;
  return { records: Number(v.records) || 0, bytes: Number(v.bytes) || 0 };
}

/**
 * Refuses a new record past the key's budget for today, naming the limit and when it resets.
 * `unwritten`: what this process counted and has not written yet (DayCounts).
 */
export async function checkDay(
  kv: KeyedStore,
  keyHash: string,
  budget: DayBudget,
  bytes: number,
  now: number,
  unwritten: DayBudget = { records: 0, bytes: 0 },
): Promise<void> {
  const stored = parse(await kv.get(dayKey(keyHash, now)));
  const used = { records: stored.records + unwritten.records, bytes: stored.bytes + unwritten.bytes };
  const hours = Math.max(1, Math.ceil((DAY_MS - (now % DAY_MS)) / 3_600_000));
  const over =
    used.records + 1 > budget.records
      ? `${used.records} records today (limit ${budget.records}, ledgerRecordsPerKeyDay)`
      : used.bytes + bytes > budget.bytes
        ? `${Math.round(used.bytes / 1024 ** 2)} MiB of requests today (limit ${Math.round(budget.bytes / 1024 ** 2)} MiB, ledgerMiBPerKeyDay)`
        : undefined;
  if (over === undefined) return;
  throw new LedgerError(
    "LEDGER_DAY_BUDGET",
    `this key has stored ${over} in the request ledger; nothing was sent`,
    {
      action: `Retry after 00:00 UTC (in about ${hours} h), or ask the operator to raise the limit.`,
    },
  );
}

/** Counts `n` new records of `bytes` in all for the key today (compare-and-set, retried on a race). */
export async function countDay(kv: KeyedStore, keyHash: string, n: DayBudget, now: number): Promise<void> {
  const key = dayKey(keyHash, now);
  for (let i = 0; i < MAX_TRIES; i++) {
    const text = await kv.get(key);
    const used = parse(text);
    const next = JSON.stringify({ records: used.records + n.records, bytes: used.bytes + n.bytes });
    if (await kv.swap(key, text, next, COUNT_TTL_MS, { deferred: true })) return;
  }
}

/** How long counts wait to be written together: one write (a read and a swap) for a burst's calls. */
const COUNT_BATCH_MS = 50;

interface Unwritten extends DayBudget {
  keyHash: string;
  now: number;
}

/**
 * The day's counts of one ledger, written off the call's path: a new record is counted once its
 * send settled (by then its answer is written; its statements, on the event loop's thread, would
 * otherwise hold the service's answer while they ran), and the counts of one window are written
 * together. A check adds what this process counted and has not written, so it never sees fewer
 * records than it made; another replica sees them once written, as it does not see calls in flight.
 */
export class DayCounts {
  readonly #kv: () => KeyedStore;
  readonly #unwritten = new Map<string, Unwritten>();
  /** Records whose send has not settled yet, counted at once should the ledger close first. */
  readonly #waiting = new Set<Unwritten>();
  readonly #writes = new Set<Promise<void>>();
  /** Counts being written, by day key. */
  #landing: Array<Unwritten & { key: string }> = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(kv: () => KeyedStore) {
    this.#kv = kv;
  }

  /** Counts a new record of `bytes` once `sent` settled, on the turn after. */
  add(keyHash: string, bytes: number, now: number, sent: Promise<unknown>): void {
    const one: Unwritten = { keyHash, now, records: 1, bytes };
    this.#waiting.add(one);
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
    void sent.then(turn, turn).then(() => this.#take(one));
  }

  /**
   * What this process counted for the key today and has not written yet, a write in progress
   * included until it lands. Taken before the check reads the store: a write landing in between is
   * then counted twice for that one check (refusing early), never missed.
   */
  unwritten(keyHash: string, now: number): DayBudget {
    const key = dayKey(keyHash, now);
    const sum = { records: 0, bytes: 0 };
    for (const u of [this.#unwritten.get(key), ...this.#landing.filter((b) => b.key === key)]) {
      sum.records += u?.records ?? 0;
      sum.bytes += u?.bytes ?? 0;
    }
    return sum;
  }

  #take(one: Unwritten): void {
    if (!this.#waiting.delete(one)) return;
    const key = dayKey(one.keyHash, one.now);
    const sum = this.#unwritten.get(key) ?? { keyHash: one.keyHash, now: one.now, records: 0, bytes: 0 };
    sum.records += one.records;
    sum.bytes += one.bytes;
    this.#unwritten.set(key, sum);
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => void this.#write(), COUNT_BATCH_MS);
      this.#timer.unref?.();
    }
  }

  /** Writes every count taken so far; a failed write loses only those counts. */
  #write(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = [...this.#unwritten].map(([key, u]) => ({ ...u, key }));
    this.#unwritten.clear();
    this.#landing.push(...batch);
    const job: Promise<void> = Promise.all(batch.map((u) => countDay(this.#kv(), u.keyHash, u, u.now)))
      .then(() => {})
      .catch(() => {})
      .finally(() => {
        this.#writes.delete(job);
        this.#landing = this.#landing.filter((b) => !batch.includes(b));
      });
    this.#writes.add(job);
    return job;
  }

  /** Every count made so far written (those still waiting for their send, too): before the store closes. */
  async settled(): Promise<void> {
    for (const one of [...this.#waiting]) this.#take(one);
    await Promise.all([...this.#writes, this.#write()]);
  }
}
