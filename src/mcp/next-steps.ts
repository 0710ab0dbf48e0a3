/**
 * What a tool's caller should do next after a failure, in this server's words: the tools,
 * arguments and settings that the service client and the ledger know nothing of. A code not
 * listed keeps the action its error carries (the service's own client action, docs/service.md#errors).
 */
import type { RequestKind } from "../client/service-errors.js";
import type { KeyOrigin } from "./context.js";

const NEXT_STEPS: Record<string, string> = {
  INVALID_API_KEY:
    "Check the API key (GENERATION_API_KEY; on HTTP, the session's Authorization header): it is missing, malformed, revoked or expired.",
  MODEL_UNAVAILABLE: "The model is unknown or unavailable. Call list_models and pick an available model.",
  INVALID_REFERENCE:
    "A reference is not one this key can use. For an asset (referenceAssetIds, sourceImage, coverAudio and the like): upload the media with upload_asset and use its asset ID. For a voice (parameters.voiceProfileId): pick one with list_voices, or add your own with upload_voice.",
  IDEMPOTENCY_CONFLICT:
    "This idempotencyKey was already used for a different request. Reuse the original request, or omit idempotencyKey for a new one.",
  REQUEST_FAILED:
    "The original claim was released. A new authorized generation needs a new identity (call again without idempotencyKey).",
  INVALID_ARGUMENT: "Fix the named argument and call again; nothing was sent.",
  SERVICE_UNREACHABLE:
    "Nothing was sent and nothing was charged: the service could not be reached (the connection was refused, or its name did not resolve). Check GENERATION_BASE_URL and that the service is up, then call again.",
  OUTPUT_UNAVAILABLE: "The signed URL was refused (it may have expired). Call poll_task for a fresh URL.",
  OUTPUT_TOO_LARGE:
    "The output is larger than this server reads inline; call save_outputs with the task ID, or download it from its signed URL.",
};

/**
 * What to do about a key the service refused (INVALID_API_KEY), by where the key came from: a
 * remote user reconnects their connector (a new sign-in, with a key that works); only a key from
 * the environment is fixed in GENERATION_API_KEY.
 */
const KEY_REFUSED: Record<KeyOrigin, string> = {
  environment:
    "The service refused the key in GENERATION_API_KEY (revoked, expired or mistyped). Set it to a key the service accepts, then restart the MCP server; paid calls are refused until then.",
  header:
    "The service refused the key in this request's Authorization header (revoked, expired or mistyped). Connect again with a key the service accepts (Authorization: Bearer lgk_…).",
  "sign-in":
    "The service refused the key you signed in with (revoked or expired), so this connection has ended. Reconnect the connector in your app (disconnect it, then connect again) and sign in with a key the service accepts.",
};

export const keyRefusedStep = (origin: KeyOrigin): string => KEY_REFUSED[origin];

/** The next step for a failure's code where the key's origin decides it (a refused key), else none. */
export const stepByKey =
  (origin: KeyOrigin) =>
  (code: string): string | undefined =>
    code === "INVALID_API_KEY" ? KEY_REFUSED[origin] : undefined;

/** The voice named in parameters.voiceProfileId is the reference refused: no asset upload helps. */
const UNKNOWN_VOICE =
  "The voice in parameters.voiceProfileId is not one this key can use. For operation speech, call list_voices (scope explore for approved public voices, mine for your own) and pass a listed voice ID; for voice_clone, upload a recording with upload_voice and pass its voice ID.";

const LEDGER =
  "The request ledger could not be read or written, so nothing was sent. Check GENERATION_STORE (path, permissions, disk space).";

/** An upload whose outcome is unknown is not to be repeated blindly (docs/service.md#uploads). */
const AMBIGUOUS_UPLOAD =
  "The upload may or may not have arrived, and uploads carry no identity: do not repeat it blindly. For a voice, list_voices with scope mine shows whether it arrived; an asset upload spends no Gems, so uploading again at worst leaves a duplicate asset.";

/**
 * Ledger failures whose own action says more than "check GENERATION_STORE" (a key's daily budget,
 * src/ledger/day-budget.ts, says when it resets).
 */
const OWN_ACTION = new Set(["LEDGER_NO_SQLITE", "LEDGER_FILE_GONE", "LEDGER_DAY_BUDGET"]);

export interface Failure {
  code: string;
  /** The action the error itself carries, used when this layer has nothing to add. */
  action: string;
  /** The error's message: where a code covers several causes, it names the field refused. */
  message?: string | undefined;
  requestKind?: RequestKind | undefined;
  /** Whether the request was refused for good (a ServiceError's `outcome === "definitive"`). */
  definitive?: boolean | undefined;
}

export function nextStep(f: Failure): string {
  if (f.requestKind === "upload" && f.definitive === false && f.code !== "SERVICE_UNREACHABLE") {
    return AMBIGUOUS_UPLOAD;
  }
  if (f.code === "INVALID_REFERENCE" && /voiceProfileId|\bvoice\b/i.test(f.message ?? ""))
    return UNKNOWN_VOICE;
  const listed = NEXT_STEPS[f.code];
  if (listed !== undefined) return listed;
  // A Node without node:sqlite carries its own fix (upgrade Node), and a ledger file gone under the server says where its records were written back
  // (src/ledger/stores/sqlite-file.ts).
  if (f.code.startsWith("LEDGER_") && !OWN_ACTION.has(f.code)) return LEDGER;
  return f.action;
}

// ---------- after a success: structuredContent's `next` (src/mcp/results.ts, okResult) ----------

/** The step when there is none left, as `next` says it. */
export const DONE = "nothing: done";

/**
 * What a tool's caller does after each success, where it is not a task's (src/calls/paid/task-view.ts
 * says a task's): every successful result carries one in structuredContent and its text, so a host
 * that shows its model only structuredContent (Claude Code) still tells it what comes next.
 */
export const AFTER = {
  chat: (hitLimit: boolean): string =>
    hitLimit
      ? "the answer hit max_tokens: call chat again with a higher max_tokens, or ask it to continue."
      : `${DONE} (the answer is in content).`,
  extraction: `${DONE} (the analysis is in extraction; frames are suggested times, not images).`,
  models: (kind: string | undefined): string =>
    `pick an available model's id and pass it as model to ${kind === undefined ? "generate_image, generate_video, generate_audio or chat" : kind === "text" ? "chat" : `generate_${kind}`}, with parameters from its capabilities.`,
  assetReady: (id: string, video: boolean): string =>
    `use "${id}" in referenceAssetIds or a parameter such as sourceImage${video ? ", or as videoAssetId for extract_video" : ""}.`,
  assetProcessing: (state: string): string =>
    `the asset is ${state}; a submission that uses it before it is ready gets REFERENCES_PROCESSING (retry later with the same idempotencyKey).`,
  voice: (id: string): string =>
    `call generate_audio with operation voice_clone, model service-voice and parameters.voiceProfileId "${id}".`,
  saved: (count: number): string =>
    count > 0
      ? "tell the user where the saved files are (listed above); nothing else is needed."
      : "nothing was saved: call poll_task with the task ID to see whether it has finished outputs.",
  requests: (nextCursor: string | undefined): string =>
    nextCursor === undefined
      ? "poll_task with a taskId to read a task; an uncertain request replays when called again with the same arguments."
      : `poll_task with a taskId to read a task; for older requests call list_requests with cursor "${nextCursor}".`,
  /** The viewer's app-only tools: the view itself acts on what they return. */
  viewer: DONE,
} as const;
