/** What the ledger checks of a run request before anything else, what its claim writes, and how it words a refusal. */
import { strict as assert } from "node:assert";
import { LIMITS } from "../config/service-limits.js";
import { ArgumentError } from "../shared/local-refusals.js";
import { LedgerError } from "./ledger-errors.js";
import type { RunRequest } from "./ledger-types.js";
import type { StoredRecord } from "./record.js";
import { isRetained, isUnresolved } from "./record-rules.js";

export function checkRequest(req: RunRequest): void {
  if (!/^[0-9a-f]{64}$/.test(req.keyHash))
    throw new ArgumentError("keyHash", "must be hashKey(apiKey): 64 hex digits");
  if (req.tool === "") throw new ArgumentError("tool", "must not be empty");
  if (req.endpoint === "") throw new ArgumentError("endpoint", "must not be empty");
  // A caller's key was checked once, at the tool's edge (its schema); the ledger, which makes it a
  // record's name, asserts it rather than checking it again.
  assert.ok(
    req.idempotencyKey === undefined || LIMITS.idempotencyKeyPattern.test(req.idempotencyKey),
    "idempotencyKey reached the ledger unchecked",
  );
}

export function refusal(what: string, cause: unknown): LedgerError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  // A corrupt or misconfigured ledger keeps its own code; anything else is a failed write.
  if (cause instanceof LedgerError) {
    return new LedgerError(cause.code, `the ledger ${what}: ${detail}`, { cause, action: cause.action });
  }
  return new LedgerError("LEDGER_WRITE_FAILED", `the ledger ${what}: ${detail}`, { cause });
}

/** Whether an identical call may take over this record (docs/idempotency.md#rules, rules 3 and 5). */
export function isReusable(rec: StoredRecord): boolean {
  return isUnresolved(rec) || isRetained(rec) || (rec.state === "succeeded" && !rec.delivered);
}

/**
 * A new record, committed before the first byte is sent. It is recorded as `sent` (attempt 1), as
 * its send follows the commit at once: after a crash in between, a `sent` record resumes exactly
 * as a `prepared` one would (the same identity and bytes are replayed), and the call is spared a
 * second commit.
 */
export function freshRecord(
  req: {
    idempotencyKey?: string;
    tool: string;
    endpoint: string;
    keyHash: string;
    bytes: string;
    model?: string;
  },
  identity: string,
  hash: string,
  now: number,
): StoredRecord {
  return {
    v: 1,
    version: 1,
    identity,
    explicit: req.idempotencyKey !== undefined,
    tool: req.tool,
    endpoint: req.endpoint,
    keyHash: req.keyHash,
    bytes: req.bytes,
    bodyHash: hash,
    ...(req.model === undefined ? {} : { model: req.model }),
    state: "sent",
    delivered: false,
    attempts: 1,
    createdAt: now,
    updatedAt: now,
  };
}
