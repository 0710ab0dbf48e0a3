/**
 * Every tool call answers within its budget: the `wait` it was given plus a few seconds, and by
 * default well under the ~60 s many hosts allow a call (docs/polling.md#budgets). What is
 * not known by then is answered as it stands, with the identity, never left to the host's cut.
 */
import { type RequestKind, TimeoutError } from "../client/service-errors.js";

/** Seconds on top of `wait` for submitting, presenting and saving. */
export const GRACE_SECONDS = 8;
/** A call that names no `wait` of its own never runs longer than this. */
export const DEFAULT_BUDGET_CAP_MS = 55_000;
/** The submission phase stops this long before the end, to record "uncertain" and answer. */
const ANSWER_RESERVE_MS = 1_000;

export interface Budget {
  /** The whole budget, for messages. */
  readonly totalMs: number;
  remainingMs(): number;
  /**
   * Aborts when the caller cancels or `reserveMs` before the budget ends. A budget that ran out
   * aborts with a TimeoutError of a submission: the outcome is unknown, the identity replays.
   */
  signal(caller: AbortSignal, reserveMs?: number, kind?: RequestKind): AbortSignal;
  /** Clears the timers of every signal handed out: call it once their work has settled. */
  release(): void;
}

export function budgetOf(totalMs: number, now: () => number = Date.now): Budget {
  const endsAt = now() + totalMs;
  const seconds = Math.round(totalMs / 1000);
  const timers = new Set<NodeJS.Timeout>();
  return {
    totalMs,
    remainingMs: () => Math.max(0, endsAt - now()),
    signal(caller, reserveMs = ANSWER_RESERVE_MS, kind = "submission") {
      const message = `the service did not answer within this call's budget of ${seconds} s`;
      const t = timeoutSignal(
        caller,
        endsAt - reserveMs - now(),
        () => new TimeoutError({ message, requestKind: kind }),
      );
      timers.add(t.timer);
      return t.signal;
    },
    release() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}

/** A signal that aborts with the caller, or after `ms` with the reason `reason()` gives. */
function timeoutSignal(
  caller: AbortSignal,
  ms: number,
  reason: () => Error,
): { signal: AbortSignal; timer: NodeJS.Timeout } {
  const own = new AbortController();
  const timer = setTimeout(() => own.abort(reason()), Math.max(0, ms));
  timer.unref?.();
  caller.addEventListener("abort", () => clearTimeout(timer), { once: true });
  return { signal: AbortSignal.any([caller, own.signal]), timer };
}

/**
 * One submission attempt's limit, inside the budget: an attempt the service leaves unanswered is
 * given up as uncertain, and the ledger replays the same identity and bytes while time remains
 * (the service then returns the work the first attempt started, or says it is still pending).
 */
export function attemptSignal(caller: AbortSignal, ms: number): { signal: AbortSignal; release(): void } {
  const t = timeoutSignal(
    caller,
    ms,
    () =>
      new TimeoutError({
        message: `no answer to this attempt within ${Math.round(ms / 1000)} s`,
        requestKind: "submission",
      }),
  );
  return { signal: t.signal, release: () => clearTimeout(t.timer) };
}

/** The budget of a call with `wait` seconds (or the configured default wait). */
export function callBudget(wait: number | undefined, defaultWait: number): Budget {
  if (wait !== undefined) return budgetOf((wait + GRACE_SECONDS) * 1000);
  return budgetOf(Math.min((defaultWait + GRACE_SECONDS) * 1000, DEFAULT_BUDGET_CAP_MS));
}

/** The budget of a call with no wait (chat, extraction): the default cap. */
export const defaultBudget = (): Budget => budgetOf(DEFAULT_BUDGET_CAP_MS);

/** A signal that aborts with the caller or after `ms`, whichever comes first. */
export function capped(caller: AbortSignal, ms: number): { signal: AbortSignal; expired(): boolean } {
  const timeout = AbortSignal.timeout(Math.max(0, ms));
  return { signal: AbortSignal.any([caller, timeout]), expired: () => timeout.aborted };
}
