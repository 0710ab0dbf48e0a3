/**
 * How a request that got no usable answer reads: a connection that failed before anything was
 * sent (UnreachableError: the outcome is known), and a redirect, which is never followed with the
 * key. Shared by both transports of http-request.ts (fetch, and node-exchange.ts).
 */
import {
  ConnectionError,
  InvalidResponseError,
  type RequestKind,
  UnreachableError,
} from "./service-errors.js";

/**
 * Network errors that come before any byte of a request leaves: the connection was refused or
 * never made, or the host's name did not resolve (also for a proxy). A reset or a closed socket
 * may come after the request was written, and stays uncertain.
 */
const NEVER_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * The code of a fetch failure's cause (undici, and node-exchange.ts: `TypeError: fetch failed`
 * with the socket's error).
 */
function causeCode(err: unknown): string | undefined {
  const code = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof code === "string" ? code : undefined;
}

/** A connection failure, or, when nothing was sent, an UnreachableError saying so. */
export function connectFailure(failure: unknown, err: unknown, kind: RequestKind): unknown {
  if (!(failure instanceof ConnectionError) || !NEVER_SENT.has(causeCode(err) ?? "")) return failure;
  return new UnreachableError({
    message: `${failure.message} (nothing was sent)`,
    requestKind: kind,
    cause: err,
  });
}

/** A 3xx answer: the key goes to the base URL's origin and nowhere else, so it is not followed. */
export function redirected(status: number, what: string, kind: RequestKind): InvalidResponseError {
  return new InvalidResponseError({
    status,
    code: undefined,
    message: `${what}: the service answered with a redirect (HTTP ${status}), which this client does not follow with the key`,
    requestKind: kind,
  });
}

export const isRedirect = (status: number): boolean => status >= 300 && status < 400 && status !== 304;
