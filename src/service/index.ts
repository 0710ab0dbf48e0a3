/** The service client's public surface: nothing here knows of MCP or the ledger. */
export { type ChatResult, type ClientOptions, DEFAULT_OUTPUT_MAX_BYTES, ServiceClient } from "./client.js";
export { checkTaskId, endpointOf, PATHS, type SubmissionKind, TASK_ID_MAX, taskPath } from "./endpoints.js";
export * from "./errors.js";
export { DEFAULT_TIMEOUT_MS } from "./http.js";
export * from "./limits.js";
export { pollDelayMs, type WaitOptions, type WaitResult, waitForTask } from "./poll.js";
export { buildChatBody, buildExtractBody, buildMediaBody, canonicalJson } from "./requests.js";
export * from "./schemas.js";
export { readChatStream } from "./sse.js";
export type { AssetSource, VoiceSource } from "./uploads.js";
