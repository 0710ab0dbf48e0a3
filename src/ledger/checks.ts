/** What the ledger checks of a run request before anything else, and how it words a refusal. */
import { strict as assert } from "node:assert";
import { ArgumentError } from "../client/service-errors.js";
import { LIMITS } from "../config/service-limits.js";
import type { RunRequest } from "./ledger-types.js";
import { LedgerError } from "./record.js";

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
