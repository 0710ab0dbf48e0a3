/** The ledger's errors. */
import type { RecordState } from "./record.js";

/** The ledger itself failed (store unreachable, read-only, corrupt): nothing is sent. */
export class LedgerError extends Error {
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
export class IdempotencyConflictError extends Error {
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
 */
export class IdentifiedError extends Error {
  override readonly name = "IdentifiedError";
  override readonly cause: unknown;
  readonly identity: string;
  readonly state: RecordState;
  constructor(cause: unknown, identity: string, state: RecordState) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.cause = cause;
    this.identity = identity;
    this.state = state;
  }
}
