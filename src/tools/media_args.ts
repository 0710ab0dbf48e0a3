/**
 * The input of generate_image, generate_video and generate_audio: the service's MediaRequest
 * (src/client/schemas.ts, the one definition of its fields and bounds) with its cross-field rules
 * (src/client/request-rules.ts), described, and extended with what the tool adds (`wait`, `save`,
 * `idempotencyKey`). Checked once, at the edge (src/mcp/define-tool.ts).
 */
import { z } from "zod";
import { checkMediaRules, withRules } from "../client/request-rules.js";
import { MediaRequestSchema } from "../client/schemas.js";
import { AUDIO_OPERATIONS, type MediaKind } from "../config/service-limits.js";
import {
  approvalField,
  approvalOut,
  idempotencyKeyField,
  modelField,
  nextOut,
  nonBlank,
  savedOut,
  saveField,
  TaskBriefOut,
  waitField,
} from "../mcp/fields.js";

const S = MediaRequestSchema.shape;

/** What each media tool says of its own fields. */
export interface MediaFieldDocs {
  parameters: string;
  prompt?: string;
}

const described = (kind: MediaKind, docs: MediaFieldDocs) => ({
  model: modelField(kind),
  prompt: nonBlank(S.prompt, "say what to generate").describe(docs.prompt ?? "What to generate."),
  parameters: S.parameters.describe(docs.parameters),
  referenceAssetIds: S.referenceAssetIds.describe("Asset IDs from upload_asset."),
  // Which ceiling goes when the call gives none is said once, in the server's instructions.
  maxGems: S.maxGems.describe("Most Gems to spend."),
  idempotencyKey: idempotencyKeyField,
  approval: approvalField,
  wait: waitField,
  save: saveField,
});

/** generate_image's and generate_video's input: a MediaRequest without `operation`. */
export const visualInput = (kind: "image" | "video", docs: MediaFieldDocs) =>
  withRules(MediaRequestSchema.omit({ operation: true }).extend(described(kind, docs)), (args) =>
    checkMediaRules(kind, args),
  );

/** generate_audio's input: a MediaRequest whose `operation` is required. */
export const audioInput = (docs: MediaFieldDocs) =>
  withRules(
    MediaRequestSchema.extend({
      ...described("audio", docs),
      operation: z
        .enum(AUDIO_OPERATIONS)
        .describe("speech: a voice from list_voices; voice_clone: one from upload_voice."),
    }),
    (args) => checkMediaRules("audio", args),
  );

/** A submission's answer; a quote (nothing sent) carries only `approval`. */
export const submissionOutput = z.object({
  idempotencyKey: z.string().optional(),
  // False for a replay (no new charge): the server's instructions and the text say so.
  created: z.boolean().optional(),
  task: TaskBriefOut.optional(),
  saved: savedOut,
  approval: approvalOut,
  next: nextOut,
});

export const submissionHints = {
  readOnlyHint: false,
  destructiveHint: false,
  // A repeat after a delivered result is new work that spends again (only idempotencyKey replays).
  idempotentHint: false,
  openWorldHint: true,
} as const;

/** What every media submission's description says of spending and following up; the rest is in the server's instructions. */
export const SPENDS_AND_NEXT =
  "It spends Gems; returns the task and its identity (idempotencyKey); then poll_task.";
