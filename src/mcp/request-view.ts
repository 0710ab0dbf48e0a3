/**
 * How a ledger record reads to a person: list_requests, the task resources' listing and the
 * recover_lost_work prompt. The ledger stores `succeeded` for "the service accepted the submission"
 * (src/ledger/record.ts), which is not the task's outcome: the task may still be queued, or have
 * failed. The stored value stays (ledgers persist across versions, and every store filters on
 * it); only the name shown changes, to `accepted`, with the task's last status a tool read beside it.
 */
import type { LedgerRecord } from "../ledger/listing.js";
import type { RecordState } from "../ledger/record.js";

export const SHOWN_STATES = ["prepared", "sent", "uncertain", "accepted", "closed"] as const;
export type ShownState = (typeof SHOWN_STATES)[number];

export function shownState(state: RecordState): ShownState {
  return state === "succeeded" ? "accepted" : state;
}

/**
 * A state filter as a caller names it, as stored; `succeeded` (the earlier name) still works.
 * `open` is what is left to pick up: an outcome unknown, a result not delivered, or a task not
 * seen finish (queued or running), as recover_lost_work lists them (docs/idempotency.md).
 */
export function storedFilter(state: string): string {
  if (state === "open") return "unfinished";
  return state === "accepted" ? "succeeded" : state;
}

const REASON_CHARS = 200;

/** The closed reason as one short phrase: code and the start of the message. */
export function reasonWords(r: LedgerRecord): string {
  const reason = r.closedReason;
  if (reason === undefined) return "no reason recorded";
  const message =
    reason.message.length > REASON_CHARS ? `${reason.message.slice(0, REASON_CHARS - 1)}…` : reason.message;
  return `${reason.code}${reason.status === undefined ? "" : ` (HTTP ${reason.status})`}: ${message}`;
}

/** Where the task stands as far as this server saw it. */
export function taskWords(r: LedgerRecord): string {
  if (r.taskId === undefined) return "";
  if (r.taskStatus === undefined) return `task ${r.taskId}, status not read since submission`;
  return `task ${r.taskId}, ${r.taskStatus} when last read (${r.taskSeenAt ?? "time unknown"})`;
}

/** The state in words a person can act on. */
export function stateWords(r: LedgerRecord): string {
  switch (r.state) {
    case "prepared":
      return "prepared (recorded, not sent yet; the same call sends it)";
    case "sent":
      return "sent (no answer received; the same call replays it)";
    case "uncertain":
      return "uncertain (outcome unknown; the same call replays it without a second charge)";
    case "closed":
      return `closed, ${reasonWords(r)}`;
    case "succeeded": {
      const task = taskWords(r);
      const undelivered = r.delivered ? "" : "; result not delivered: the same call replays it";
      return `accepted by the service${task ? `: ${task}` : ""}${undelivered}`;
    }
  }
}

/** One line of list_requests. */
export function requestLine(r: LedgerRecord): string {
  const what = [r.model, r.prompt === undefined ? undefined : `"${r.prompt}"`].filter(Boolean).join(" ");
  const state = stateWords(r).replace(/[.!?]+$/, "");
  return `- ${r.idempotencyKey} ${r.tool}${what ? ` (${what})` : ""}: ${state}. Updated ${r.updatedAt}.`;
}
