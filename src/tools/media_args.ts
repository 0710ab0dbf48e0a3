/** Arguments shared by generate_image, generate_video and generate_audio. */
import { z } from "zod";
import { LIMITS } from "../config/service-limits.js";
import {
  idempotencyKeyField,
  modelField,
  savedOut,
  saveField,
  TaskBriefOut,
  waitField,
} from "../mcp/fields.js";

export const mediaFields = (kind: string, parameters: string, prompt = "What to generate.") => ({
  model: modelField(kind),
  prompt: z.string().max(LIMITS.mediaPrompt).describe(prompt),
  parameters: z.record(z.string(), z.unknown()).optional().describe(parameters),
  referenceAssetIds: z
    .array(z.string().min(1).max(LIMITS.referenceAssetIds.idMax))
    .max(LIMITS.referenceAssetIds.maxItems)
    .optional()
    .describe("Reference asset IDs from upload_asset."),
  maxGems: z
    .number()
    .int()
    .min(0)
    .max(LIMITS.mediaMaxGems)
    .optional()
    .describe("Most Gems to spend; default GENERATION_MAX_GEMS."),
  idempotencyKey: idempotencyKeyField,
  wait: waitField,
  save: saveField,
});

export const submissionOutput = z.object({
  idempotencyKey: z.string(),
  created: z.boolean().describe("False for a replay (no new charge)."),
  task: TaskBriefOut,
  saved: savedOut,
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
  "It spends Gems, and returns the task and its identity (idempotencyKey) within `wait` s: follow up with poll_task.";
