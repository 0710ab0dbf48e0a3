/**
 * One family of errors for everything the service (or the way to it) can answer.
 * The class is chosen by HTTP status and code; every error carries the interface's
 * client action and an `outcome` that callers (the ledger, the tools) act on:
 *
 * - `definitive`: the request was refused or closed; replaying the same identity will not help.
 * - `uncertain`: a submission whose result is unknown; replay the same identity with the same bytes.
 * - `retryable`: a read that failed transiently; simply try again.
 */

export type Outcome = "definitive" | "uncertain" | "retryable";

/** Whether the failed request was a submission (carries an identity) or a read/upload. */
export type RequestKind = "submission" | "read" | "upload";

/** The interface's client action for each code (Errors table). */
export const CLIENT_ACTIONS: Record<string, string> = {
  INVALID_API_KEY: "Check GENERATION_API_KEY: it is missing, malformed, revoked or expired.",
  INSUFFICIENT_SCOPE: "The key lacks a scope; a full workflow needs a key with both `read` and `generate`.",
  ACCOUNT_BLOCKED: "Account access is blocked; the account owner must resolve it in the application.",
  ACCOUNT_UNAVAILABLE: "Account setup is unfinished; finish it in the application.",
  API_KEY_LIMIT:
    "The key's monthly Gem cap cannot cover this reservation. Do not raise the cap automatically or switch keys; ask the user.",
  LLM_QUOTA_EXHAUSTED: "The account's LLM allowance or paid-Gem settings do not allow this; ask the user.",
  PRICE_CHANGED:
    "The quote exceeds maxGems. Ask the user to approve a higher maxGems, then submit again with it.",
  IDEMPOTENCY_CONFLICT:
    "This identity was already used for a different request. Reuse the original request, or omit idempotencyKey for a new one.",
  REQUEST_UNCERTAIN:
    "The outcome is pending or ambiguous. Keep the identity; replaying the same request later never dispatches again.",
  REQUEST_FAILED:
    "The original claim was released. A new authorized generation needs a new identity (call again without idempotencyKey).",
  REFERENCES_PROCESSING:
    "References are not ready yet. Keep the same identity and retry once they are ready.",
  ANALYSIS_FAILED:
    "The analysis could not be parsed; usage may already be billed. Replaying the same identity returns the retained result.",
  NOT_FOUND: "Unknown route or task, not owned by this key, deleted, or not a public-API run. Check the ID.",
  INVALID_REQUEST: "Fix the named field and submit again.",
  INVALID_REFERENCE:
    "A reference is not an owned, usable asset ID. Upload the media first and use its asset ID.",
  MODEL_UNAVAILABLE: "The model is unknown or unavailable. Call list_models and pick an available model.",
  PAYLOAD_TOO_LARGE: "The payload is too large. Reduce its size below the stated limit.",
  WORKFLOW_UNAVAILABLE: "Temporarily unavailable. Keep the identity and retry later with backoff.",
  PROVIDER_UNAVAILABLE: "The provider is unavailable. Keep the identity and retry later with backoff.",
  TEMPORARILY_UNAVAILABLE: "Temporarily unavailable. Keep the identity and retry later with backoff.",
  INCOMPLETE_STREAM:
    "The answer stream ended early. Replay with the same identity; the service returns the retained answer without charging again.",
  NETWORK_ERROR:
    "The connection failed. For a submission the outcome is unknown: replay with the same identity.",
  TIMEOUT: "The request timed out. For a submission the outcome is unknown: replay with the same identity.",
  BAD_GATEWAY: "The service's gateway failed. Keep the identity and retry with backoff.",
  SERVER_ERROR:
    "The service failed. Keep the identity and retry with backoff; never resubmit under a new identity.",
  BAD_REQUEST: "The service refused the request as malformed. Fix the request before sending it again.",
  INVALID_RESPONSE: "The service answered with something this client cannot read. Retry later or report it.",
  INVALID_ARGUMENT: "Fix the named argument and call again; nothing was sent.",
  OUTPUT_TOO_LARGE:
    "The output is larger than this client accepts here; download it from its signed URL directly.",
  OUTPUT_UNAVAILABLE:
    "The signed URL was refused (it may have expired). Read the task again for a fresh URL.",
};

const UNCERTAIN_CODES = new Set(["REQUEST_UNCERTAIN", "REFERENCES_PROCESSING"]);

export interface ServiceErrorInit {
  status: number | undefined;
  code: string | undefined;
  message: string;
  requestKind: RequestKind;
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

export class ServiceError extends Error {
  override readonly name: string = "ServiceError";
  /** HTTP status; undefined for network failures and timeouts. */
  readonly status: number | undefined;
  /** The service's code, or one of ours (NETWORK_ERROR, TIMEOUT, …) when it gave none. */
  readonly code: string;
  /** Whether the service itself supplied `code`. */
  readonly serviceCode: boolean;
  readonly action: string;
  readonly outcome: Outcome;
  readonly requestKind: RequestKind;
  /** From a Retry-After header, when the service sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(init: ServiceErrorInit, fallbackCode: string, outcome: Outcome) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.serviceCode = init.code !== undefined;
    this.code = init.code ?? fallbackCode;
    this.action = CLIENT_ACTIONS[this.code] ?? CLIENT_ACTIONS[fallbackCode] ?? "See the message.";
    this.outcome = outcome;
    this.requestKind = init.requestKind;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** Failures that may have reached the service: uncertain for a submission, retryable for a read. */
const transient = (kind: RequestKind): Outcome => (kind === "submission" ? "uncertain" : "retryable");

export class BadRequestError extends ServiceError {
  override readonly name = "BadRequestError";
  constructor(init: ServiceErrorInit) {
    super(init, "BAD_REQUEST", "definitive");
  }
}
export class AuthenticationError extends ServiceError {
  override readonly name = "AuthenticationError";
  constructor(init: ServiceErrorInit) {
    super(init, "INVALID_API_KEY", "definitive");
  }
}
export class PermissionDeniedError extends ServiceError {
  override readonly name = "PermissionDeniedError";
  constructor(init: ServiceErrorInit) {
    super(init, "INSUFFICIENT_SCOPE", "definitive");
  }
}
export class SpendingLimitError extends ServiceError {
  override readonly name = "SpendingLimitError";
  constructor(init: ServiceErrorInit) {
    super(init, "API_KEY_LIMIT", "definitive");
  }
}
export class NotFoundError extends ServiceError {
  override readonly name = "NotFoundError";
  constructor(init: ServiceErrorInit) {
    super(init, "NOT_FOUND", "definitive");
  }
}
/** 409 with a code that closes the request: IDEMPOTENCY_CONFLICT, PRICE_CHANGED, REQUEST_FAILED, ANALYSIS_FAILED. */
export class ConflictError extends ServiceError {
  override readonly name = "ConflictError";
  constructor(init: ServiceErrorInit) {
    super(init, "CONFLICT", "definitive");
  }
}
/** 409 REQUEST_UNCERTAIN or REFERENCES_PROCESSING: keep the identity and replay. */
export class RequestUncertainError extends ServiceError {
  override readonly name = "RequestUncertainError";
  constructor(init: ServiceErrorInit) {
    super(init, "REQUEST_UNCERTAIN", "uncertain");
  }
}
export class PayloadTooLargeError extends ServiceError {
  override readonly name = "PayloadTooLargeError";
  constructor(init: ServiceErrorInit) {
    super(init, "PAYLOAD_TOO_LARGE", "definitive");
  }
}
export class UnprocessableEntityError extends ServiceError {
  override readonly name = "UnprocessableEntityError";
  constructor(init: ServiceErrorInit) {
    super(init, "INVALID_REQUEST", "definitive");
  }
}
export class ServiceUnavailableError extends ServiceError {
  override readonly name = "ServiceUnavailableError";
  constructor(init: ServiceErrorInit) {
    super(init, "TEMPORARILY_UNAVAILABLE", transient(init.requestKind));
  }
}
export class InternalServerError extends ServiceError {
  override readonly name = "InternalServerError";
  constructor(init: ServiceErrorInit) {
    super(init, init.status === 502 ? "BAD_GATEWAY" : "SERVER_ERROR", transient(init.requestKind));
  }
}
/** The connection failed before a response: the request may or may not have arrived. */
export class ConnectionError extends ServiceError {
  override readonly name = "ConnectionError";
  constructor(init: Omit<ServiceErrorInit, "status" | "code">) {
    super({ ...init, status: undefined, code: undefined }, "NETWORK_ERROR", transient(init.requestKind));
  }
}
export class TimeoutError extends ServiceError {
  override readonly name = "TimeoutError";
  constructor(init: Omit<ServiceErrorInit, "status" | "code">) {
    super({ ...init, status: undefined, code: undefined }, "TIMEOUT", transient(init.requestKind));
  }
}
/** A 200 text stream that carried an error frame or ended without `[DONE]`. */
export class IncompleteStreamError extends ServiceError {
  override readonly name = "IncompleteStreamError";
  /** Text received before the stream broke; not a complete answer. */
  readonly partialContent: string;
  constructor(init: Omit<ServiceErrorInit, "requestKind">, partialContent: string) {
    super({ ...init, requestKind: "submission" }, "INCOMPLETE_STREAM", "uncertain");
    this.partialContent = partialContent;
  }
}
/** A response whose body does not match the interface (not JSON, wrong shape). */
export class InvalidResponseError extends ServiceError {
  override readonly name = "InvalidResponseError";
  constructor(init: ServiceErrorInit) {
    super(init, "INVALID_RESPONSE", transient(init.requestKind));
  }
}

/** A signed output larger than the caller's limit: refused before (or while) reading it. */
export class OutputTooLargeError extends ServiceError {
  override readonly name = "OutputTooLargeError";
  readonly maxBytes: number;
  constructor(init: Omit<ServiceErrorInit, "code" | "requestKind">, maxBytes: number) {
    super({ ...init, code: undefined, requestKind: "read" }, "OUTPUT_TOO_LARGE", "definitive");
    this.maxBytes = maxBytes;
  }
}
/** A signed output URL answered 4xx: usually expired; a fresh task read re-signs it. */
export class OutputUnavailableError extends ServiceError {
  override readonly name = "OutputUnavailableError";
  constructor(init: Omit<ServiceErrorInit, "code" | "requestKind">) {
    super({ ...init, code: undefined, requestKind: "read" }, "OUTPUT_UNAVAILABLE", "definitive");
  }
}

/** Chooses the error class by HTTP status and code. */
export function errorFromResponse(init: ServiceErrorInit): ServiceError {
  const { status, code } = init;
  if (status === 409 && code !== undefined && UNCERTAIN_CODES.has(code))
    return new RequestUncertainError(init);
  switch (status) {
    case 400:
      return new BadRequestError(init);
    case 401:
      return new AuthenticationError(init);
    case 402:
      return new SpendingLimitError(init);
    case 403:
      return new PermissionDeniedError(init);
    case 404:
      return new NotFoundError(init);
    case 409:
      return new ConflictError(init);
    case 413:
      return new PayloadTooLargeError(init);
    case 422:
      return new UnprocessableEntityError(init);
    case 503:
      return new ServiceUnavailableError(init);
  }
  if (status !== undefined && status >= 500) return new InternalServerError(init);
  // 408/425/429 are not in the interface, but they say "not processed, try later".
  if (status === 408 || status === 425 || status === 429) {
    return new ServiceUnavailableError({ ...init, code: code ?? "TEMPORARILY_UNAVAILABLE" });
  }
  return new BadRequestError(init);
}

/** Refused locally: nothing was sent. The message names the field and the limit. */
export class ArgumentError extends Error {
  override readonly name = "ArgumentError";
  readonly code = "INVALID_ARGUMENT";
  readonly field: string;
  readonly action = CLIENT_ACTIONS.INVALID_ARGUMENT as string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}
