/**
 * The tools the README's tool table promises: tests check the server against this list, written
 * independently of src/tools/all-tools.ts.
 */
export const CONTRACT_TOOLS = [
  "list_models",
  "generate_image",
  "generate_video",
  "generate_audio",
  "generate_batch",
  "poll_task",
  "upload_asset",
  "list_voices",
  "upload_voice",
  "chat",
  "extract_video",
  "list_requests",
] as const;

/** Tools that only read (readOnlyHint true). */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set([
  "list_models",
  "poll_task",
  "list_voices",
  "list_requests",
]);

/** Tools that spend Gems, each with an identity (idempotencyKey). */
export const SPENDING_TOOLS = [
  "generate_image",
  "generate_video",
  "generate_audio",
  "generate_batch",
  "chat",
  "extract_video",
];
