/**
 * The service's paths (docs/service.md#endpoints), spelled here and nowhere else. Callers that need to
 * name an endpoint (the ledger records which one a submission went to) ask `endpointOf`.
 */

import type { MediaKind } from "../config/service-limits.js";
import { ArgumentError } from "../shared/local-refusals.js";

/**
 * The service bounds no task ID (docs/service.md#limits); this is a guard against absurd input,
 * not the service's rule.
 */
export const TASK_ID_MAX = 256;

export const PATHS = {
  models: "/api/generate/models",
  assets: "/api/generate/assets",
  voices: "/api/generate/voices",
  chat: "/api/generate/text/v1/chat/completions",
  extraction: "/api/generate/extract/video",
} as const;

/** What a submission is: one of the media kinds, a chat completion, or a video analysis. */
export type SubmissionKind = MediaKind | "chat" | "extraction";

/** The path a submission of `kind` is sent to. */
export function endpointOf(kind: SubmissionKind): string {
  if (kind === "chat") return PATHS.chat;
  if (kind === "extraction") return PATHS.extraction;
  return `/api/generate/${kind}`;
}

/**
 * A task's path. The ID becomes a path segment, so an ID that is empty, too long, a dot segment
 * (`.`, `..`: URL parsing would resolve it to another route) or holds a separator is refused
 * here, before any request with the key leaves the process.
 */
export function taskPath(taskId: string): string {
  return `/api/generate/tasks/${encodeURIComponent(checkTaskId(taskId))}`;
}

export function checkTaskId(taskId: unknown, field = "taskId"): string {
  const max = TASK_ID_MAX;
  if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > max) {
    throw new ArgumentError(field, `must be a task ID of 1 to ${max} characters`);
  }
  if (taskId === "." || taskId === "..") {
    throw new ArgumentError(field, "must be a task ID, not a path segment such as `.` or `..`");
  }
  if (/[/\\]/.test(taskId)) throw new ArgumentError(field, "must be a task ID without `/` or `\\`");
  // Control characters are never part of an ID and only hide what is being sent.
  if (/\p{Cc}/u.test(taskId)) throw new ArgumentError(field, "must be a task ID without control characters");
  return taskId;
}
