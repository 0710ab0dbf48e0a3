/**
 * Every change to a stored record after its claim: compare-and-set on the version it was computed
 * from, forward only, in the order this process made them.
 */

import type { LedgerSettings } from "./ledger-types.js";
import { checkAdvance, isFinal, LedgerError, type StoredRecord } from "./record.js";
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
    if (next.state === "closed") next.expiresAt = next.updatedAt + this.#o.retentionMs;
    return next;
  }

  /**
   * Compare-and-set on the version `how` was computed from. When another writer (another replica
   * resuming the same request) got there first, the change is recomputed on the newer record, so
   * no write is lost and none moves a record backwards.
   */
  async #cas(rec: StoredRecord, how: Change): Promise<StoredRecord> {
    let cur = rec;
    for (let i = 0; i < MAX_CAS_TRIES; i++) {
      const next = this.next(cur, how);
      if (next === undefined) return cur;
      checkAdvance(cur, next);
      if (await this.#store.replace(cur, next)) return next;
      const now = await this.#store.get(rec.keyHash, rec.identity);
      if (now === undefined) throw new LedgerError("LEDGER_RACE", `the record ${rec.identity} is gone`);
      cur = now;
    }
    throw new LedgerError("LEDGER_RACE", `the record ${rec.identity} kept changing under this write`);
  }

  /** Writes after every earlier write to the same record; resolves to the record as written. */
  save(rec: StoredRecord, how: Change, later = false): Promise<StoredRecord> {
    const key = `${rec.keyHash}\u0000${rec.identity}`;
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

  /** Queues the write but does not wait; a failed write leaves the older state. */
  queue(rec: StoredRecord, how: Change): StoredRecord {
    void this.save(rec, how, true).catch(() => {});
    return this.next(rec, how) ?? rec;
  }

  /** The queued writes of one record, done (failed or not). */
  async pending(keyHash: string, identity: string): Promise<void> {
    await this.#writes.get(`${keyHash}\u0000${identity}`);
  }

  /** Every queued write, done. */
  async settled(): Promise<void> {
    await Promise.all(this.#writes.values());
  }
}

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

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
