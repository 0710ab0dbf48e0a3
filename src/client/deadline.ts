/**
 * Time limits and cancellation for one request: a deadline that can be re-armed while a
 * stream is alive, and the mapping of a thrown fetch error to the family (the caller's
 * abort passes through; our timer is TimeoutError; the rest is a ConnectionError).
 */
import { ConnectionError, type RequestKind, ServiceError, TimeoutError } from "./service-errors.js";

/** A timer that aborts a request; `touch` re-arms it so a live stream is never cut. */
export interface Deadline {
  readonly signal: AbortSignal;
  timedOut(): boolean;
  touch(): void;
  clear(): void;
}

export function startDeadline(ms: number, caller?: AbortSignal): Deadline {
  const own = new AbortController();
  const fire = () => own.abort(new DOMException(`timed out after ${ms} ms`, "TimeoutError"));
  let timer = setTimeout(fire, ms);
  return {
    signal: caller ? AbortSignal.any([own.signal, caller]) : own.signal,
    timedOut: () => own.signal.aborted,
    touch() {
      clearTimeout(timer);
      if (!own.signal.aborted) timer = setTimeout(fire, ms);
    },
    clear: () => clearTimeout(timer),
  };
}

/**
 * Maps a thrown fetch/body error to the family: the caller's own abort passes through
 * unchanged; our timer becomes TimeoutError; anything else is a ConnectionError.
 */
export function failureOf(
  err: unknown,
  d: Deadline,
  caller: AbortSignal | undefined,
  what: string,
  kind: RequestKind,
): unknown {
  if (caller?.aborted) return caller.reason;
  if (d.timedOut()) return new TimeoutError({ message: `${what} timed out`, requestKind: kind, cause: err });
  if (err instanceof ServiceError) return err;
  if (!(err instanceof Error))
    return new ConnectionError({ message: `${what} failed`, requestKind: kind, cause: err });
  const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message ?? (err as Error).message;
  return new ConnectionError({ message: `${what} failed: ${detail}`, requestKind: kind, cause: err });
}
