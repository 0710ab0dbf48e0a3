/**
 * One family of errors for everything the service (or the way to it) can answer.
 * The class is chosen by HTTP status and code; every error carries the service's
 * client action (docs/service.md#errors) and an `outcome` that callers (the ledger, the tools) act on:
 *
 * - `definitive`: the request was refused or closed; replaying the same identity will not help.
 * - `uncertain`: a submission whose result is unknown; replay the same identity with the same bytes.
 * - `retryable`: a read that failed transiently; simply try again.
 * - `unsent`: a submission or upload that never left (the connection was refused, the name did not
 *   resolve): nothing reached the service, so nothing is to replay and nothing was charged.
 */
import { CodedError } from "../shared/coded-error.js";

export type Outcome = "definitive" | "uncertain" | "retryable" | "unsent";

/** Whether the failed request was a submission (carries an identity) or a read/upload. */
export type RequestKind = "submission" | "read" | "upload";

/**
 * What to do about each code, as the service advises (docs/service.md#errors and the
 * sections it points to). The MCP layer adds its own next steps (tool names, settings) on top.
 */
export const CLIENT_ACTIONS: Record<string, string> = {
  INVALID_API_KEY: "The key is missing, malformed, revoked or expired.",
  INSUFFICIENT_SCOPE: "The key lacks a scope; a full workflow needs a key with both `read` and `generate`.",
  ACCOUNT_BLOCKED: "Account access is blocked; the account owner must resolve it in the application.",
  ACCOUNT_UNAVAILABLE: "Account setup is unfinished; finish it in the application.",
  API_KEY_LIMIT:
    "The key's monthly Gem cap cannot cover this reservation. Do not raise the cap automatically or switch keys; ask the user.",
  LLM_QUOTA_EXHAUSTED: "The account's LLM allowance or paid-Gem settings do not allow this; ask the user.",
  PRICE_CHANGED:
    "The quote exceeds maxGems. Ask the user to approve a higher maxGems, then submit again with it.",
  IDEMPOTENCY_CONFLICT:
    "This identity was already used for a different request; a different request needs a new identity.",
  REQUEST_UNCERTAIN:
    "The outcome is pending or ambiguous. Keep the identity; replaying the same request later never dispatches again.",
  REQUEST_FAILED: "The original claim was released. A new authorized generation needs a new identity.",
  REFERENCES_PROCESSING:
    "References are not ready yet. Keep the same identity and retry once they are ready.",
  ANALYSIS_FAILED:
    "The analysis could not be parsed; usage may already be billed. The result is retained for replay of the same identity.",
  NOT_FOUND: "Unknown route or task, not owned by this key, deleted, or not a public-API run. Check the ID.",
  INVALID_REQUEST: "Fix the named field and submit again.",
  INVALID_REFERENCE:
    "A reference is not an owned, usable asset ID. Upload the media first and use its asset ID.",
  MODEL_UNAVAILABLE:
    "The model is unknown or unavailable. Model IDs change: discover the available ones at run time.",
  PAYLOAD_TOO_LARGE: "The payload is too large. Reduce its size below the stated limit.",
  WORKFLOW_UNAVAILABLE: "Temporarily unavailable. Keep the identity and retry later with backoff.",
  PROVIDER_UNAVAILABLE: "The provider is unavailable. Keep the identity and retry later with backoff.",
  TEMPORARILY_UNAVAILABLE: "Temporarily unavailable. Keep the identity and retry later with backoff.",
  INCOMPLETE_STREAM:
    "The answer stream ended early. Replay with the same identity; the service returns the retained answer without charging again.",
  NETWORK_ERROR:
    "The connection failed. For a submission the outcome is unknown: replay with the same identity.",
  SERVICE_UNREACHABLE:
    "The service could not be reached (the connection was refused, or its name did not resolve), so nothing was sent and nothing was charged. Try again once it is reachable.",
  TIMEOUT: "The request timed out. For a submission the outcome is unknown: replay with the same identity.",
  BAD_GATEWAY: "The service's gateway failed. Keep the identity and retry with backoff.",
  SERVER_ERROR:
    "The service failed. Keep the identity and retry with backoff; never resubmit under a new identity.",
  BAD_REQUEST: "The service refused the request as malformed. Fix the request before sending it again.",
  INVALID_RESPONSE: "The service answered with something this client cannot read. Retry later or report it.",
  OUTPUT_TOO_LARGE:
    "The output is larger than this client accepts here; download it from its signed URL directly.",
  OUTPUT_UNAVAILABLE:
    "The signed URL was refused (it may have expired). Read the task again for a fresh URL.",
};

/**
 * An upload whose outcome is unknown. Uploads carry no identity, and an upload whose outcome
 * is unknown is not to be repeated blindly (docs/service.md#uploads).
 */
const AMBIGUOUS_UPLOAD_ACTION =
  "The upload may or may not have arrived, and uploads carry no identity: do not repeat it blindly; check first whether it arrived.";

export interface ServiceErrorInit {
  status: number | undefined;
  code: string | undefined;
  message: string;
  requestKind: RequestKind;
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

export class ServiceError extends CodedError {
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

  /** Without `fallbackCode` and `outcome`, both come from the status table below. */
  constructor(init: ServiceErrorInit, fallbackCode?: string, outcome?: Outcome) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    const row = fallbackCode === undefined || outcome === undefined ? rowOf(init) : undefined;
    const fallback = fallbackCode ?? row?.code ?? "BAD_REQUEST";
    this.status = init.status;
    this.serviceCode = init.code !== undefined;
    this.code = init.code ?? fallback;
    this.outcome = outcome ?? outcomeOf(row?.outcome ?? "definitive", init.requestKind);
    this.requestKind = init.requestKind;
    this.retryAfterMs = init.retryAfterMs;
    this.action =
      init.requestKind === "upload" && (this.outcome === "uncertain" || this.outcome === "retryable")
        ? AMBIGUOUS_UPLOAD_ACTION
        : (CLIENT_ACTIONS[this.code] ?? CLIENT_ACTIONS[fallback] ?? "See the message.");
  }
}

/** `transient`: may have reached the service; uncertain for a submission, retryable otherwise. */
type RowOutcome = Outcome | "transient";

function outcomeOf(o: RowOutcome, kind: RequestKind): Outcome {
  if (o !== "transient") return o;
  return kind === "submission" ? "uncertain" : "retryable";
}

// The classes answering a status: their code (when the service gave none) and outcome come
// from STATUS_ROWS below, so each is a name to catch with instanceof and nothing more.
export class BadRequestError extends ServiceError {
  override readonly name = "BadRequestError";
}
export class AuthenticationError extends ServiceError {
  override readonly name = "AuthenticationError";
}
export class PermissionDeniedError extends ServiceError {
  override readonly name = "PermissionDeniedError";
}
export class SpendingLimitError extends ServiceError {
  override readonly name = "SpendingLimitError";
}
export class NotFoundError extends ServiceError {
  override readonly name = "NotFoundError";
}
/** 409 with a code that closes the request: IDEMPOTENCY_CONFLICT, PRICE_CHANGED, REQUEST_FAILED, ANALYSIS_FAILED. */
export class ConflictError extends ServiceError {
  override readonly name = "ConflictError";
}
/** 409 REQUEST_UNCERTAIN or REFERENCES_PROCESSING: keep the identity and replay. */
export class RequestUncertainError extends ServiceError {
  override readonly name = "RequestUncertainError";
}
export class PayloadTooLargeError extends ServiceError {
  override readonly name = "PayloadTooLargeError";
}
export class UnprocessableEntityError extends ServiceError {
  override readonly name = "UnprocessableEntityError";
}
export class ServiceUnavailableError extends ServiceError {
  override readonly name = "ServiceUnavailableError";
}
export class InternalServerError extends ServiceError {
  override readonly name = "InternalServerError";
}

interface Row {
  Class: new (init: ServiceErrorInit, fallbackCode: string, outcome: Outcome) => ServiceError;
  /** The code when the service gave none. */
  code: string;
  outcome: RowOutcome;
}
const row = (Class: Row["Class"], code: string, outcome: RowOutcome): Row => ({ Class, code, outcome });

/** docs/service.md#errors by status. 408/425/429 are not in it, but say "not processed, try later". */
const STATUS_ROWS: Record<number, Row> = {
  400: row(BadRequestError, "BAD_REQUEST", "definitive"),
  401: row(AuthenticationError, "INVALID_API_KEY", "definitive"),
  402: row(SpendingLimitError, "API_KEY_LIMIT", "definitive"),
  403: row(PermissionDeniedError, "INSUFFICIENT_SCOPE", "definitive"),
  404: row(NotFoundError, "NOT_FOUND", "definitive"),
  408: row(ServiceUnavailableError, "TEMPORARILY_UNAVAILABLE", "transient"),
  409: row(ConflictError, "CONFLICT", "definitive"),
  413: row(PayloadTooLargeError, "PAYLOAD_TOO_LARGE", "definitive"),
  422: row(UnprocessableEntityError, "INVALID_REQUEST", "definitive"),
  425: row(ServiceUnavailableError, "TEMPORARILY_UNAVAILABLE", "transient"),
  429: row(ServiceUnavailableError, "TEMPORARILY_UNAVAILABLE", "transient"),
  502: row(InternalServerError, "BAD_GATEWAY", "transient"),
  503: row(ServiceUnavailableError, "TEMPORARILY_UNAVAILABLE", "transient"),
};
/** Codes whose client action differs from their status's: 409 ones that keep the identity open. */
const CODE_ROWS: Record<string, Row> = {
  "409 REQUEST_UNCERTAIN": row(RequestUncertainError, "REQUEST_UNCERTAIN", "uncertain"),
  "409 REFERENCES_PROCESSING": row(RequestUncertainError, "REQUEST_UNCERTAIN", "uncertain"),
};
const SERVER_ROW = row(InternalServerError, "SERVER_ERROR", "transient");

function rowOf({ status, code }: Pick<ServiceErrorInit, "status" | "code">): Row {
  const byCode = code === undefined ? undefined : CODE_ROWS[`${status} ${code}`];
  if (byCode) return byCode;
  const byStatus = status === undefined ? undefined : STATUS_ROWS[status];
  if (byStatus) return byStatus;
  // Other 5xx may have reached the service; anything else unlisted is a refusal.
  return status !== undefined && status >= 500 ? SERVER_ROW : (STATUS_ROWS[400] as Row);
}

/** Chooses the error class, fallback code and outcome by HTTP status and code (the tables above). */
export function errorFromResponse(init: ServiceErrorInit): ServiceError {
  const r = rowOf(init);
  return new r.Class(init, r.code, outcomeOf(r.outcome, init.requestKind));
}

/** The connection failed before a response: the request may or may not have arrived. */
export class ConnectionError extends ServiceError {
  override readonly name = "ConnectionError";
  constructor(init: Omit<ServiceErrorInit, "status" | "code">) {
    const outcome = outcomeOf("transient", init.requestKind);
    super({ ...init, status: undefined, code: undefined }, "NETWORK_ERROR", outcome);
  }
}
/**
 * The connection was never made (refused, or the name did not resolve): no byte of the request
 * left. A read may simply be tried again; a submission or an upload is known unsent.
 */
export class UnreachableError extends ServiceError {
  override readonly name = "UnreachableError";
  constructor(init: Omit<ServiceErrorInit, "status" | "code">) {
    const outcome = init.requestKind === "read" ? "retryable" : "unsent";
    super({ ...init, status: undefined, code: undefined }, "SERVICE_UNREACHABLE", outcome);
  }
}
export class TimeoutError extends ServiceError {
  override readonly name = "TimeoutError";
  constructor(init: Omit<ServiceErrorInit, "status" | "code">) {
    super(
      { ...init, status: undefined, code: undefined },
      "TIMEOUT",
      outcomeOf("transient", init.requestKind),
    );
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
/** A response whose body does not match docs/service.md#responses (not JSON, wrong shape). */
export class InvalidResponseError extends ServiceError {
  override readonly name = "InvalidResponseError";
  constructor(init: ServiceErrorInit) {
    super(init, "INVALID_RESPONSE", outcomeOf("transient", init.requestKind));
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
