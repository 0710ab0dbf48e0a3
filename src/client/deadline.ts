/**
 * Time limits and cancellation, one helper for all of them: `limitSignal` aborts with the caller
 * or after N ms, whichever comes first, and removes what it added to the caller's signal once
 * released (or fired), so a long-lived signal shared by many attempts collects no listeners.
 * Also: `waitAtMost` (waits for work, or N ms, whichever ends first), and the mapping of a thrown
 * fetch error to the family (the caller's abort passes through; our timer is TimeoutError; the rest
 * is a ConnectionError).
 */
import { ConnectionError, type RequestKind, ServiceError, TimeoutError } from "./service-errors.js";

/** A signal that aborts with the caller or after `ms`; `touch` re-arms it (a live stream is never cut). */
export interface Limit {
  readonly signal: AbortSignal;
  /** Whether the time ran out (rather than the caller aborting). */
  expired(): boolean;
  /** Starts the `ms` over, unless already aborted. */
  touch(): void;
  /** Clears the timer and removes the listener on the caller's signal: call once the work settled. */
  release(): void;
}

/**
 * Aborts with the caller's reason when it aborts, or after `ms` with `reason()` (by default a
 * DOMException named TimeoutError). Nothing stays on the caller's signal once it fired or was released.
 */
export function limitSignal(
  caller: AbortSignal | undefined,
  ms: number,
  reason: () => unknown = () => new DOMException(`timed out after ${Math.round(ms)} ms`, "TimeoutError"),
): Limit {
  const own = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    release();
    own.abort(caller?.reason);
  };
  const fire = () => {
    timedOut = true;
    release();
    own.abort(reason());
  };
  const arm = () => {
    timer = setTimeout(fire, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    timer.unref?.();
  };
  function release(): void {
    clearTimeout(timer);
    caller?.removeEventListener("abort", onAbort);
  }
  if (caller?.aborted) own.abort(caller.reason);
  else {
    caller?.addEventListener("abort", onAbort, { once: true });
    arm();
  }
  return {
    signal: own.signal,
    expired: () => timedOut,
    touch() {
      if (own.signal.aborted) return;
      clearTimeout(timer);
      arm();
    },
    release,
  };
}

/**
 * Waits until `work` settles or `ms` have passed, whichever comes first; the timer goes with it.
 * Rejects only as `work` does within the time.
 */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([work, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Maps a thrown fetch/body error to the family: the caller's own abort passes through
 * unchanged; our timer becomes TimeoutError; anything else is a ConnectionError.
 */
export function failureOf(
  err: unknown,
  d: Limit,
  caller: AbortSignal | undefined,
  what: string,
  kind: RequestKind,
): unknown {
  if (caller?.aborted) return caller.reason;
  if (d.expired()) return new TimeoutError({ message: `${what} timed out`, requestKind: kind, cause: err });
  if (err instanceof ServiceError) return err;
  if (!(err instanceof Error))
    return new ConnectionError({ message: `${what} failed`, requestKind: kind, cause: err });
  const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message ?? (err as Error).message;
  return new ConnectionError({ message: `${what} failed: ${detail}`, requestKind: kind, cause: err });
}
