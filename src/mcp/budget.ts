/**
 * Every tool call answers within its budget: the `wait` it was given plus a few seconds, and by
 * default well under the ~60 s many hosts allow a call (docs/polling.md#budgets). The limits
 * themselves are one table (src/config/time-limits.ts); what is not known by the end is answered as
 * it stands, with the identity, never left to the host's cut.
 */
import { type Limit, limitSignal } from "../client/deadline.js";
import { type RequestKind, TimeoutError } from "../client/service-errors.js";
import {
  ANSWER_RESERVE_MS,
  DEFAULT_BUDGET_CAP_MS,
  DEFAULT_WAIT_CAP_SECONDS,
  GRACE_SECONDS,
} from "../config/time-limits.js";

export interface Budget {
  /** The whole budget, for messages. */
  readonly totalMs: number;
  remainingMs(): number;
  /**
   * Aborts when the caller cancels or `reserveMs` before the budget ends. A budget that ran out
   * aborts with a TimeoutError of a submission: the outcome is unknown, the identity replays.
   */
  signal(caller: AbortSignal, reserveMs?: number, kind?: RequestKind): AbortSignal;
  /**
   * Aborts with the caller or after `ms` (never past the budget's end): one step's own limit.
   * Released with the budget, or earlier by the step.
   */
  limit(caller: AbortSignal, ms: number): Limit;
  /** Releases every signal handed out (timers, listeners): call it once their work has settled. */
  release(): void;
}

export function budgetOf(totalMs: number, now: () => number = Date.now): Budget {
  const endsAt = now() + totalMs;
  const seconds = Math.round(totalMs / 1000);
  const held = new Set<Limit>();
  const hold = (l: Limit): Limit => {
    held.add(l);
    return l;
  };
  return {
    totalMs,
    remainingMs: () => Math.max(0, endsAt - now()),
    signal(caller, reserveMs = ANSWER_RESERVE_MS, kind = "submission") {
      const message = `the service did not answer within this call's budget of ${seconds} s`;
      const reason = () => new TimeoutError({ message, requestKind: kind });
      return hold(limitSignal(caller, endsAt - reserveMs - now(), reason)).signal;
    },
    limit(caller, ms) {
      return hold(limitSignal(caller, Math.min(ms, endsAt - now())));
    },
    release() {
      for (const l of held) l.release();
      held.clear();
    },
  };
}

/**
 * A call's `wait` as one call can keep it outside MCP Tasks: hosts cut a call at about 60 s (a
 * `wait: 120` call or a poll_task with `wait: 600` timed out in every host tried), so a longer wait
 * is held to DEFAULT_WAIT_CAP_SECONDS, and the result says so (`note`) with what to do instead.
 * Inside an MCP task the work waits for the service's task itself, whatever `wait` says.
 */
export function boundedWait(wait: number | undefined): { wait: number | undefined; note?: string } {
  if (wait === undefined || wait <= DEFAULT_WAIT_CAP_SECONDS) return { wait };
  return {
    wait: DEFAULT_WAIT_CAP_SECONDS,
    note: `wait ${wait} s was held to ${DEFAULT_WAIT_CAP_SECONDS} s: one call answers within ${DEFAULT_BUDGET_CAP_MS / 1000} s, since hosts cut a call at about 60 s. To wait longer, call poll_task again with the task ID (each call waits up to ${DEFAULT_WAIT_CAP_SECONDS} s); hosts that run MCP Tasks wait for the whole task.`,
  };
}

/** The budget of a call with `wait` seconds (or the configured default wait). */
export function callBudget(wait: number | undefined, defaultWait: number): Budget {
  if (wait !== undefined) return budgetOf((wait + GRACE_SECONDS) * 1000);
  return budgetOf(Math.min((defaultWait + GRACE_SECONDS) * 1000, DEFAULT_BUDGET_CAP_MS));
}

/** The budget of a call with no wait (chat, extraction): the default cap. */
export const defaultBudget = (): Budget => budgetOf(DEFAULT_BUDGET_CAP_MS);
