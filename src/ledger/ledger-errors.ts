/**
 * The ledger's errors, one family under LedgerFailure: each says what the ledger did with the call
 * (`code`) and what to do next (`action`, in the ledger's words; src/mcp/next-steps.ts names the
 * settings). The store failed (LedgerError), the identity belongs to another request
 * (IdempotencyConflictError), or a run failed once its identity was claimed (IdentifiedError).
 */
import { CodedError } from "../shared/coded-error.js";
import type { RecordState } from "./record.js";

export abstract class LedgerFailure extends CodedError {}

/** The ledger itself failed (store unreachable, read-only, corrupt): nothing is sent. */
export class LedgerError extends LedgerFailure {
  override readonly name = "LedgerError";
  readonly code: string;
  readonly action: string;
  constructor(code: string, message: string, options?: { cause?: unknown; action?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.action = options?.action ?? "The request ledger could not be read or written, so nothing was sent.";
  }
}

/** Same `idempotencyKey`, different request: refused locally, nothing sent (docs/idempotency.md#rules, 4). */
export class IdempotencyConflictError extends LedgerFailure {
  override readonly name = "IdempotencyConflictError";
  readonly code = "IDEMPOTENCY_CONFLICT";
  readonly field = "idempotencyKey";
  readonly identity: string;
  readonly action = "This identity was already used for a different request; nothing was sent.";
  constructor(identity: string, detail: string) {
    super(
      `idempotencyKey: "${identity}" was already used for a different request (${detail}); nothing was sent`,
    );
    this.identity = identity;
  }
}

/**
 * A run that failed once its identity was claimed: the failure as thrown (`cause`), the identity,
 * and the state its record was left in. `closed` means refused for good (an identical call gets a
 * new identity); any other state means an identical call replays this identity and its bytes.
 * Its code and action are its cause's; a cause outside every family is a fault of this server.
 */
export class IdentifiedError extends LedgerFailure {
  override readonly name = "IdentifiedError";
  override readonly cause: unknown;
  readonly identity: string;
  readonly state: RecordState;
  readonly code: string;
  readonly action: string;
  constructor(cause: unknown, identity: string, state: RecordState) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.cause = cause;
    this.identity = identity;
    this.state = state;
    this.code = cause instanceof CodedError ? cause.code : "INTERNAL_ERROR";
    // The ledger's own "nothing was sent" is not true of a request already sent: past the send,
    // a ledger failure is told as the identity to keep.
    const ownAction = cause instanceof CodedError && !(cause instanceof LedgerError && state !== "prepared");
    this.action = ownAction
      ? cause.action
      : state === "closed"
        ? "The record is closed: a corrected call gets a new identity."
        : "Keep the identity: the identical call replays it and never charges twice.";
  }
}
