/**
 * Every change to a stored record after its claim: compare-and-set on the version it was computed
 * from, forward only, in the order this process made them.
 */

import type { ErrorSummary } from "./error-summary.js";
import { LedgerError } from "./ledger-errors.js";
import type { LedgerSettings } from "./ledger-types.js";
import { describeBody } from "./listing.js";
import type { StoredRecord } from "./record.js";
import { checkAdvance, isFinal } from "./record-rules.js";
import type { LedgerStore } from "./store.js";

/** What one write changes, computed from the record as it is in the store when the write lands. */
export type Change = (cur: StoredRecord) => {
  patch: Partial<StoredRecord>;
  drop?: Array<keyof StoredRecord>;
};
export const change =
  (patch: Partial<StoredRecord>, drop: Array<keyof StoredRecord> = []): Change =>
  () => ({ patch, drop });
/** A write that keeps meeting another writer's newer version gives up after this many tries. */
const MAX_CAS_TRIES = 8;

export class RecordWriter {
  readonly #store: LedgerStore;
  readonly #o: Pick<LedgerSettings, "now" | "retentionMs">;
  /** The last queued write of each record: writes to one record land in the order they were made. */
  readonly #writes = new Map<string, Promise<unknown>>();
  /** Changes waiting (briefly) to be written together with the next change of their record. */
  readonly #held = new Map<string, { rec: StoredRecord; how: Change; timer: NodeJS.Timeout }>();

  constructor(store: LedgerStore, settings: Pick<LedgerSettings, "now" | "retentionMs">) {
    this.#store = store;
    this.#o = settings;
  }

  /** The record after `how`, or undefined when it would move a final state (then nothing is written). */
  next(cur: StoredRecord, how: Change): StoredRecord | undefined {
    const { patch, drop = [] } = how(cur);
    if (isFinal(cur) && patch.state !== undefined && patch.state !== cur.state) return undefined;
    const next: StoredRecord = { ...cur, ...patch, version: cur.version + 1, updatedAt: this.#o.now() };
    for (const key of drop) delete next[key];
    if (next.state === "closed") {
      next.expiresAt = next.updatedAt + this.#o.retentionMs;
      // Refused for good and never replayed: nothing was charged, so nothing large is kept for it.
      if (next.retained !== true) next.bytes = bodyStub(next.bytes);
    }
    return next;
  }

  /**
   * Compare-and-set on the version `how` was computed from. When another writer (another replica
   * resuming the same request) got there first, the change is recomputed on the newer record, so
   * no write is lost and none moves a record backwards.
   * A write that leaves the record `succeeded` (the answer, its delivered mark) need not be durable
   * before the next: lost to a power cut, the record is back at `sent` (or succeeded, unmarked),
   * and its replay under the same identity gets the same task or response from the service, with
   * no new charge. So it rides on the next durable commit (the next claim's) instead of syncing on
   * its own: one disk sync per paid call rather than two. Every other write syncs as it lands.
   */
  async #cas(rec: StoredRecord, how: Change): Promise<StoredRecord> {
    let cur = rec;
    for (let i = 0; i < MAX_CAS_TRIES; i++) {
      const next = this.next(cur, how);
      if (next === undefined) return cur;
      checkAdvance(cur, next);
      if (await this.#store.replace(cur, next, { deferred: next.state === "succeeded" })) return next;
      const now = await this.#store.get(rec.keyHash, rec.identity);
      if (now === undefined) throw new LedgerError("LEDGER_RACE", `the record ${rec.identity} is gone`);
      cur = now;
    }
    throw new LedgerError("LEDGER_RACE", `the record ${rec.identity} kept changing under this write`);
  }

  /**
   * Writes after every earlier write to the same record; resolves to the record as written. A
   * change held for this record (see `hold`) is written with it, in one write.
   */
  save(rec: StoredRecord, how: Change, later = false): Promise<StoredRecord> {
    const key = `${rec.keyHash}\u0000${rec.identity}`;
    const held = this.#held.get(key);
    if (held !== undefined) {
      this.#held.delete(key);
      clearTimeout(held.timer);
      return this.save(held.rec, compose(held.how, how), later);
    }
    const before = this.#writes.get(key) ?? Promise.resolve();
    // A write nobody waits for starts after the I/O in hand (the request going out, the answer
    // being written): a statement costs the event loop's thread a little even when its commit
    // runs elsewhere.
    const job = (later ? before.then(nextTurn) : before).then(() => this.#cas(rec, how));
    const tail = job.catch(() => {});
    this.#writes.set(key, tail);
    void tail.then(() => {
      if (this.#writes.get(key) === tail) this.#writes.delete(key);
    });
    return job;
  }

  /**
   * Holds a change for at most `ms`, so the next change of the same record is written with it (a
   * success and its delivered mark: one commit instead of two); a read of this writer's records
   * (`pending`, `settled`) writes it at once. Returns the record as the change leaves it.
   */
  hold(rec: StoredRecord, how: Change, ms: number): StoredRecord {
    const key = `${rec.keyHash}\u0000${rec.identity}`;
    this.#flush(key);
    const timer = setTimeout(() => this.#flush(key), ms);
    timer.unref?.();
    this.#held.set(key, { rec, how, timer });
    return this.next(rec, how) ?? rec;
  }

  /** The record of `keyHash` carrying `taskId` as a change held for it leaves it, if one is held. */
  heldTask(keyHash: string, taskId: string): StoredRecord | undefined {
    for (const { rec, how } of this.#held.values()) {
      if (rec.keyHash !== keyHash) continue;
      const after = applied(rec, how(rec));
      if (after.taskId === taskId) return after;
    }
    return undefined;
  }

  /** Starts the write of a held change, if any. */
  #flush(key: string): void {
    const held = this.#held.get(key);
    if (held === undefined) return;
    this.#held.delete(key);
    clearTimeout(held.timer);
    void this.save(held.rec, held.how, true).catch(() => {});
  }

  /** Queues the write but does not wait; a failed write leaves the older state. */
  queue(rec: StoredRecord, how: Change): StoredRecord {
    void this.save(rec, how, true).catch(() => {});
    return this.next(rec, how) ?? rec;
  }

  /** The queued writes of one record, done (failed or not). */
  async pending(keyHash: string, identity: string): Promise<void> {
    const key = `${keyHash}\u0000${identity}`;
    this.#flush(key);
    await this.#writes.get(key);
  }

  /** Every queued (and held) write, done. */
  async settled(): Promise<void> {
    for (const key of [...this.#held.keys()]) this.#flush(key);
    await Promise.all(this.#writes.values());
  }
}

/**
 * Closes a record none of whose attempts left this machine, with `reason`, unless another writer
 * (another replica resuming it) made an attempt since: `attempts` is this writer's own count.
 */
export const closeUnsent =
  (attempts: number, reason: ErrorSummary): Change =>
  (cur) =>
    cur.attempts === attempts && !isFinal(cur)
      ? { patch: { state: "closed", closedReason: reason, lastError: reason } }
      : { patch: {} };

/** The delivered mark as a patch: a delivered success expires `expiresAt`; taken back, it never does. */
export function deliveredMark(
  cur: StoredRecord,
  delivered: boolean,
  expiresAt: number,
): { patch: Partial<StoredRecord>; drop?: Array<keyof StoredRecord> } {
  if (cur.state !== "succeeded") return { patch: { delivered } };
  if (delivered) return { patch: { delivered, expiresAt } };
  return { patch: { delivered }, drop: ["expiresAt"] };
}

/**
 * `first`, then `then` on the record `first` leaves, as one change. A `then` that would move the
 * state `first` made final is left out, as the writer would leave it out on its own.
 */
function compose(first: Change, then: Change): Change {
  return (cur) => {
    const mid = applied(cur, first(cur));
    const second = then(mid);
    const moves = second.patch.state !== undefined && second.patch.state !== mid.state;
    const end = isFinal(mid) && moves ? mid : applied(mid, second);
    const drop = (Object.keys(cur) as Array<keyof StoredRecord>).filter((k) => !(k in end));
    return { patch: end, drop };
  };
}

function applied(rec: StoredRecord, c: ReturnType<Change>): StoredRecord {
  const out: StoredRecord = { ...rec, ...c.patch };
  for (const key of c.drop ?? []) delete out[key];
  return out;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * What a closed, unretained record keeps of its body: what its listing shows (the model, the
 * prompt's first 80 characters), at most a few hundred bytes, where the body may have been 48 MiB.
 * Its bodyHash stays, so a reused idempotencyKey with another body is still told apart. Such a
 * record is never sent again (checks.ts's isReusable), so its bytes are never needed.
 */
export function bodyStub(bytes: string): string {
  if (bytes.length <= STUB_MAX) return bytes;
  return JSON.stringify({ ...describeBody(bytes), dropped: bytes.length });
}
const STUB_MAX = 512;
