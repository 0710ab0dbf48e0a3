/**
 * How the submit loop reads a failure and how long it waits before replaying the same identity.
 * It acts on the client's classification (ServiceError.outcome) and knows nothing of HTTP; the
 * timing itself is the service client's one backoff module.
 */
import { type Backoff, retryDelay } from "../client/backoff.js";
import { limitSignal } from "../client/deadline.js";
import { ServiceError, TimeoutError } from "../client/service-errors.js";
import { ArgumentError } from "../shared/local-refusals.js";

export interface BackoffOptions extends Backoff {
  /** REFERENCES_PROCESSING: the references need time to finish, so wait longer. */
  referencesBaseMs: number;
}

/** A Retry-After longer than `retryAfterCapMs` is cut to it (the total budget still applies). */
export const DEFAULT_BACKOFF: BackoffOptions = {
  baseMs: 500,
  capMs: 8_000,
  referencesBaseMs: 2_000,
  retryAfterCapMs: 15_000,
};

export const DEFAULT_MAX_ATTEMPTS = 4;
export { DEFAULT_MAX_ELAPSED_MS } from "../config/time-limits.js";

export type Verdict = "close" | "retain" | "replay";

/**
 * Final answers the service keeps for replay under the same identity: a billed but unparseable
 * analysis (docs/service.md#errors, ANALYSIS_FAILED).
 */
const RETAINED_CODES = new Set(["ANALYSIS_FAILED"]);

/** Whether a record closed with this code is retained by the service (replaying it answers the same). */
export const isRetainedCode = (code: string): boolean => RETAINED_CODES.has(code);

/**
 * `close`: the service (or a local check) refused for good; the record closes with the reason.
 * `retain`: final, but the service retains it: the record closes and stays replayable, so an
 * identical call gets the same identity (and the same answer, with no new charge).
 * `replay`: the outcome is unknown; keep the identity and the bytes. Anything we cannot classify
 * counts as unknown, because guessing "not sent" is how requests get charged twice.
 */
export function verdict(err: unknown): Verdict {
  if (err instanceof ServiceError) {
    if (RETAINED_CODES.has(err.code)) return "retain";
    return err.outcome === "definitive" ? "close" : "replay";
  }
  if (err instanceof ArgumentError) return "close";
  return "replay";
}

/**
 * The attempt never left this machine (the connection was refused, the name did not resolve):
 * replaying it is safe, and when no attempt of the record ever left, nothing reached the service.
 */
export const neverSent = (err: unknown): boolean => err instanceof ServiceError && err.outcome === "unsent";

/** Milliseconds to wait before replay number `n` (0 = first replay). */
export function backoffDelay(n: number, err: unknown, o: BackoffOptions, random: () => number): number {
  const references = err instanceof ServiceError && err.code === "REFERENCES_PROCESSING";
  const timing = references ? { ...o, baseMs: o.referencesBaseMs } : o;
  // A long Retry-After is cut to the cap rather than given up on: the loop's own time budget
  // decides whether one more replay fits.
  return retryDelay(n, timing, random, err instanceof ServiceError ? err.retryAfterMs : undefined).ms;
}

/** One attempt's limit: an attempt the service leaves unanswered is uncertain, and replayed. */
export function attemptLimit(signal: AbortSignal | undefined, ms: number) {
  return limitSignal(
    signal,
    ms,
    () =>
      new TimeoutError({
        message: `no answer to this attempt within ${Math.round(ms / 1000)} s`,
        requestKind: "submission",
      }),
  );
}
