/**
 * What the ledger knows about how long tasks take: a record whose task a wait saw turn terminal
 * carries when it was last seen running and first seen terminal. Those, counted from the
 * record's creation (just before the submission was sent), are the samples the polling schedule
 * learns from (src/service/schedule.ts).
 */
import type { DurationSample } from "../service/schedule.js";
import { isExpired, type StoredRecord } from "./record.js";

/** Statuses whose duration says how long the model takes; a failure may end at any time. */
const FINISHED = new Set(["succeeded", "partial"]);

export function findTask(records: readonly StoredRecord[], taskId: string): StoredRecord | undefined {
  return records.find((r) => r.taskId === taskId);
}

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
    const seenMs = seen.terminalAt - r.createdAt;
    const pendingMs = seen.pendingAt === undefined ? 0 : Math.max(0, seen.pendingAt - r.createdAt);
    if (!(seenMs > 0) || pendingMs >= seenMs) continue;
    samples.push({ pendingMs, seenMs, at: seen.terminalAt });
  }
  return samples
    .sort((a, b) => b.at - a.at)
    .slice(0, limit)
    .map(({ pendingMs, seenMs }) => ({ pendingMs, seenMs }));
}
