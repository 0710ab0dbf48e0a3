/**
 * What a tool's caller should do next after a failure, in this server's words: the tools,
 * arguments and settings that the service client and the ledger know nothing of. A code not
 * listed keeps the action its error carries (the service's own client action, docs/service.md#errors).
 */
import type { RequestKind } from "../client/service-errors.js";

const NEXT_STEPS: Record<string, string> = {
  INVALID_API_KEY:
    "Check the API key (GENERATION_API_KEY; on HTTP, the session's Authorization header): it is missing, malformed, revoked or expired.",
  MODEL_UNAVAILABLE: "The model is unknown or unavailable. Call list_models and pick an available model.",
  INVALID_REFERENCE:
    "A reference is not an owned, usable asset ID. Upload the media with upload_asset first and use its asset ID.",
  IDEMPOTENCY_CONFLICT:
    "This idempotencyKey was already used for a different request. Reuse the original request, or omit idempotencyKey for a new one.",
  REQUEST_FAILED:
    "The original claim was released. A new authorized generation needs a new identity (call again without idempotencyKey).",
  INVALID_ARGUMENT: "Fix the named argument and call again; nothing was sent.",
  OUTPUT_UNAVAILABLE: "The signed URL was refused (it may have expired). Call poll_task for a fresh URL.",
  LEDGER_FILE_GONE:
    "Restart the MCP server so it opens the ledger at GENERATION_STORE afresh. A deleted ledger forgets earlier requests: before repeating paid work, check the tasks you already have (poll_task with their task IDs).",
  OUTPUT_TOO_LARGE:
    "The output is larger than this server reads inline; call save_outputs with the task ID, or download it from its signed URL.",
};

const LEDGER =
  "The request ledger could not be read or written, so nothing was sent. Check GENERATION_STORE (path, permissions, disk space).";

/** An upload whose outcome is unknown is not to be repeated blindly (docs/service.md#uploads). */
const AMBIGUOUS_UPLOAD =
  "The upload may or may not have arrived, and uploads carry no identity: do not repeat it blindly. For a voice, list_voices with scope mine shows whether it arrived; an asset upload spends no Gems, so uploading again at worst leaves a duplicate asset.";

export interface Failure {
  code: string;
  /** The action the error itself carries, used when this layer has nothing to add. */
  action: string;
  requestKind?: RequestKind | undefined;
  /** Whether the request was refused for good (a ServiceError's `outcome === "definitive"`). */
  definitive?: boolean | undefined;
}

export function nextStep(f: Failure): string {
  if (f.requestKind === "upload" && f.definitive === false) return AMBIGUOUS_UPLOAD;
  const listed = NEXT_STEPS[f.code];
  if (listed !== undefined) return listed;
  // A missing SQLite driver carries its own fix (upgrade Node, or install sqlite3 beside the package).
  if (f.code.startsWith("LEDGER_") && f.code !== "LEDGER_NO_SQLITE") return LEDGER;
  return f.action;
}
