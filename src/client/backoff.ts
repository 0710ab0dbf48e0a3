/**
 * Retry timing, in one place for every loop that waits before asking the service again:
 * the client's read retries and the ledger's replays of an uncertain submission. The service
 * asks callers to back off (docs/service.md#errors); this is how: full jitter
 * (a wait drawn from [0, min(cap, base * 2^n)), so clients that failed together do not
 * retry together), and the service's own `Retry-After` when it sends one, up to a cap.
 */

export interface Backoff {
  /** The first wait's upper bound; it doubles with each retry. */
  baseMs: number;
  /** No jittered wait is longer than this. */
  capMs: number;
  /** A `Retry-After` longer than this is not waited out in full (see `retryDelay`). */
  retryAfterCapMs: number;
}

/** A wait drawn from [0, min(cap, base * 2^n)); `n` is 0 before the first retry. */
export function fullJitter(n: number, b: Pick<Backoff, "baseMs" | "capMs">, random: () => number): number {
  return random() * Math.min(b.capMs, b.baseMs * 2 ** n);
}

export interface Delay {
  /** How long to wait: never less than the jittered wait, never more than `retryAfterCapMs`. */
  ms: number;
  /** The service asked for a longer wait than `retryAfterCapMs`; `ms` is cut to the cap. */
  cut: boolean;
}

/**
 * The wait before retry `n`. A `Retry-After` is honoured (it is the service's own estimate)
 * unless it exceeds the cap: then `cut` says so, and the caller decides whether a shorter wait
 * is still worth a try or the error should go back to its own caller with the hint on it.
 */
export function retryDelay(
  n: number,
  b: Backoff,
  random: () => number,
  retryAfterMs?: number | undefined,
): Delay {
  const jittered = fullJitter(n, b, random);
  if (retryAfterMs === undefined || !(retryAfterMs >= 0)) return { ms: jittered, cut: false };
  const wanted = Math.max(retryAfterMs, jittered);
  return { ms: Math.min(wanted, b.retryAfterCapMs), cut: wanted > b.retryAfterCapMs };
}

/** Parses `Retry-After` (delta seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Waits `ms`; rejects with the signal's reason as soon as it aborts (or at once if it has). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
