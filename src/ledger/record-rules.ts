/** The small pure rules over a stored record: which states are open or final, how a write may advance it, how it is read back. */

import { isTerminal } from "../config/service-limits.js";
import { LedgerError } from "./ledger-errors.js";
import { RECORD_STATES, type StoredRecord, type TaskStatusSeen } from "./record.js";

/** Outcome unknown: the next identical call must resume it, never start another. */
export function isUnresolved(rec: StoredRecord): boolean {
  return rec.state === "prepared" || rec.state === "sent" || rec.state === "uncertain";
}

/** Closed with an outcome the service keeps for replay: an identical call replays the identity. */
export function isRetained(rec: StoredRecord): boolean {
  return rec.state === "closed" && rec.retained === true;
}

/** Open = must not expire: unresolved, or succeeded without the result reaching the client. */
export function isOpen(rec: StoredRecord): boolean {
  return isUnresolved(rec) || (rec.state === "succeeded" && !rec.delivered);
}

/**
 * Accepted, with a task no tool has seen finish (queued, processing, or not read since): its
 * result is still to come, whether or not the first answer reached the client.
 */
export function isRunningTask(rec: StoredRecord): boolean {
  if (rec.state !== "succeeded" || rec.taskId === undefined) return false;
  const status = lastSighting(rec)?.status;
  return status === undefined || !isTerminal(status);
}

/** The newer of the last status read and the terminal sighting a wait noted. */
export function lastSighting(rec: StoredRecord): TaskStatusSeen | undefined {
  const terminal = rec.seen === undefined ? undefined : { status: rec.seen.status, at: rec.seen.terminalAt };
  if (terminal === undefined) return rec.lastStatus;
  return rec.lastStatus !== undefined && rec.lastStatus.at > terminal.at ? rec.lastStatus : terminal;
}

/** `succeeded` and `closed` are final: their state never changes again (other fields may). */
export function isFinal(rec: StoredRecord): boolean {
  return rec.state === "succeeded" || rec.state === "closed";
}

/**
 * The one rule every write obeys: it replaces exactly the version it was computed from, and a
 * record only moves forward: once `succeeded` or `closed`, its state stays. A write that breaks
 * it is a bug in the caller, refused before it reaches the store.
 */
export function checkAdvance(prev: StoredRecord, next: StoredRecord): void {
  if (next.version !== prev.version + 1 || next.identity !== prev.identity || next.keyHash !== prev.keyHash) {
    throw new LedgerError("LEDGER_RACE", `a write to ${prev.identity} skipped a version`);
  }
  if (isFinal(prev) && next.state !== prev.state) {
    throw new LedgerError(
      "LEDGER_BACKWARD",
      `the record ${prev.identity} is ${prev.state} and cannot become ${next.state}`,
    );
  }
}

export function isExpired(rec: StoredRecord, now: number): boolean {
  return rec.expiresAt !== undefined && rec.expiresAt <= now;
}

/**
 * `state` filter of `list`: a state name; `open` for the records that never expire; `unfinished`
 * for those and the accepted ones whose task is still running (what is left to pick up).
 */
export function matchesState(rec: StoredRecord, state: string | undefined): boolean {
  if (state === undefined || state === "all") return true;
  if (state === "open") return isOpen(rec);
  if (state === "unfinished") return isOpen(rec) || isRunningTask(rec);
  return rec.state === state;
}

/** Reads a stored value defensively: a record we cannot read is an error, never "no record". */
export function parseRecord(raw: unknown, where: string): StoredRecord {
  const r = raw as Partial<StoredRecord> | null;
  if (
    r === null ||
    typeof r !== "object" ||
    r.v !== 1 ||
    typeof r.identity !== "string" ||
    typeof r.bytes !== "string" ||
    typeof r.keyHash !== "string" ||
    typeof r.state !== "string" ||
    !RECORD_STATES.includes(r.state)
  ) {
    throw new LedgerError("LEDGER_CORRUPT", `ledger entry ${where} is not a readable record`);
  }
  // Records written before versions existed read as version 0.
  return (typeof r.version === "number" ? r : { ...r, version: 0 }) as StoredRecord;
}
