/**
 * What the ledger knows about how long tasks take: a record whose task a wait saw turn terminal
 * carries when it was last seen running and first seen terminal. Those, counted from when the
 * service's answer accepting the submission arrived (else the record's creation, just before the
 * submission was sent: that origin adds the ledger's commit and the request's own time, which vary
 * from run to run), are the samples the polling schedule learns from (src/shared/poll-schedule.ts).
 */
import type { DurationSample } from "../shared/poll-schedule.js";
import type { StoredRecord, TaskSeen, TaskStatusSeen } from "./record.js";
import { isExpired } from "./record-rules.js";
import type { LedgerStore } from "./store.js";
import type { RecordWriter } from "./writes.js";

/** Statuses whose duration says how long the model takes; a failure may end at any time. */
const FINISHED = new Set(["succeeded", "partial"]);

export function findTask(records: readonly StoredRecord[], taskId: string): StoredRecord | undefined {
  return records.find((r) => r.taskId === taskId);
}

/** Where a task's duration counts from: its submission's acceptance when known, else the record's creation. */
export const taskOriginAt = (r: StoredRecord): number => r.acceptedAt ?? r.createdAt;

export function durationSamples(
  records: readonly StoredRecord[],
  model: string,
  now: number,
  limit: number,
): DurationSample[] {
  const samples: Array<DurationSample & { at: number }> = [];
  for (const r of records) {
    const seen = r.seen;
    if (r.model !== model || seen === undefined || !FINISHED.has(seen.status) || isExpired(r, now)) continue;
    const origin = taskOriginAt(r);
    const seenMs = seen.terminalAt - origin;
    const pendingMs = seen.pendingAt === undefined ? 0 : Math.max(0, seen.pendingAt - origin);
    if (!(seenMs > 0) || pendingMs >= seenMs) continue;
    samples.push({ pendingMs, seenMs, at: seen.terminalAt });
  }
  return samples
    .sort((a, b) => b.at - a.at)
    .slice(0, limit)
    .map(({ pendingMs, seenMs }) => ({ pendingMs, seenMs }));
}

/**
 * The ledger's task history: sightings written through the same compare-and-set as every other
 * change, and read after this ledger's queued writes (the success that gives a record its task ID
 * may still be one of them).
 */
export class TaskHistory {
  readonly #notes = new Set<Promise<void>>();
  constructor(
    private readonly store: LedgerStore,
    private readonly writer: RecordWriter,
    private readonly now: () => number,
  ) {}

  async noteSeen(keyHash: string, taskId: string, seen: TaskSeen): Promise<void> {
    await this.writer.settled();
    const found = findTask(await this.store.list(keyHash), taskId);
    if (found === undefined) return;
    const rec = await this.store.get(keyHash, found.identity);
    // The first terminal sighting is the one that bounds the duration; later reads say nothing new.
    if (rec === undefined || rec.seen !== undefined) return;
    await this.writer.save(rec, (cur) => ({ patch: cur.seen === undefined ? { seen } : {} }));
  }

  /**
   * The status a tool just read, kept so a listing can show where the task stands (a request the
   * service accepted may still be queued, or have failed). Written only when it changed: a task
   * read again in the same status costs one indexed read, no write.
   */
  noteStatus(keyHash: string, taskId: string, seen: TaskStatusSeen): Promise<void> {
    const note = this.#noteStatus(keyHash, taskId, seen);
    // A listing made after a tool read a task shows that read, though the tool did not wait for it.
    const done = note.catch(() => {}).finally(() => this.#notes.delete(done));
    this.#notes.add(done);
    return note;
  }

  /** Resolves once the status notes begun so far have landed (or failed). */
  async settled(): Promise<void> {
    await Promise.all([...this.#notes]);
  }

  async #noteStatus(keyHash: string, taskId: string, seen: TaskStatusSeen): Promise<void> {
    // The submission's own status, held with its success (ledger.ts): already noted, and flushing
    // it here would cost the success its shared commit with the delivered mark.
    if (this.writer.heldTask(keyHash, taskId)?.lastStatus?.status === seen.status) return;
    await this.writer.settled();
    const [found] = await this.store.listPage({ keyHash, now: this.now(), taskId, limit: 1 });
    if (found === undefined || found.lastStatus?.status === seen.status) return;
    await this.writer.save(found, (cur) =>
      (cur.lastStatus?.at ?? 0) > seen.at ? { patch: {} } : { patch: { lastStatus: seen } },
    );
  }

  async taskOrigin(
    keyHash: string,
    taskId: string,
  ): Promise<{ createdAt: number; model?: string } | undefined> {
    await this.writer.settled();
    const rec = findTask(await this.store.list(keyHash), taskId);
    if (rec === undefined) return undefined;
    const createdAt = taskOriginAt(rec);
    return rec.model === undefined ? { createdAt } : { createdAt, model: rec.model };
  }

  async durations(keyHash: string, model: string, limit = 48): Promise<DurationSample[]> {
    await this.writer.settled();
    return durationSamples(await this.store.list(keyHash), model, this.now(), limit);
  }
}
