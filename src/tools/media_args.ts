/** Arguments shared by generate_image, generate_video and generate_audio. */
import { z } from "zod";
import { LIMITS } from "../service/limits.js";
import {
  idempotencyKeyField,
  modelField,
  savedOut,
  saveField,
  TaskOut,
  waitField,
} from "../tooling/fields.js";

export const mediaFields = (kind: string, parameters: string) => ({
  model: modelField(kind),
  prompt: z
    .string()
    .max(LIMITS.mediaPrompt)
    .describe(`What to generate (up to ${LIMITS.mediaPrompt} characters; some models allow less).`),
  parameters: z.record(z.string(), z.unknown()).optional().describe(parameters),
  referenceAssetIds: z
    .array(z.string().min(1).max(LIMITS.referenceAssetIds.idMax))
    .max(LIMITS.referenceAssetIds.maxItems)
    .optional()
    .describe("Owned asset IDs from upload_asset used as references (at most 10, each 1 to 128 characters)."),
  maxGems: z
    .number()
    .int()
    .min(0)
    .max(LIMITS.mediaMaxGems)
    .optional()
    .describe(
      "Most Gems the service may charge (0 to 1,000,000,000); above its quote it refuses with PRICE_CHANGED. Defaults to GENERATION_MAX_GEMS when set.",
    ),
  idempotencyKey: idempotencyKeyField,
  wait: waitField,
  save: saveField,
});

export const submissionOutput = z.object({
  idempotencyKey: z
    .string()
    .describe(
      "The request's identity: keep it; passing it as idempotencyKey replays this request, never charging twice.",
    ),
  created: z.boolean().describe("True for new work, false when an earlier identical request was replayed."),
  task: TaskOut,
  saved: savedOut,
});

export const submissionHints = {
  readOnlyHint: false,
  destructiveHint: false,
  // A repeat after a delivered result is new work that spends again (only idempotencyKey replays).
  idempotentHint: false,
  openWorldHint: true,
} as const;

export const KEEP_AND_NEXT =
  "It spends Gems. It waits up to `wait` seconds with progress, then returns the task as it stands: keep the task ID and the identity (idempotencyKey). If the task is not finished, call poll_task with the task ID; never submit again to check on it: a repeat after this result is new work and spends again.";
