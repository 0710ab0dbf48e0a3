/**
 * Argument and output fields several tools share, described once. Every assistant reads every
 * description on every turn, so an argument's says what it is and the limits its schema keywords
 * cannot; an output field is described where its name and the tool's description leave it unsaid.
 * The rules every paid tool shares (identity, replay, waiting) are said once, in the server's
 * instructions (src/server/assemble.ts).
 */
import { z } from "zod";
import { TASK_ID_MAX } from "../client/endpoints.js";
import { IdempotencyKeySchema } from "../client/schemas.js";
import { MAX_WAIT_SECONDS } from "../config/bounds.js";
import { LIMITS } from "../config/service-limits.js";

export { MAX_WAIT_SECONDS };

// ---------- argument fields shared by several tools ----------

export const waitField = z
  .number()
  .min(0)
  .max(MAX_WAIT_SECONDS)
  .optional()
  .describe("Seconds to wait for the task; default 45 unless configured.");
export const saveField = z
  .boolean()
  .optional()
  .describe("Also save finished outputs to disk (save_outputs).");
export const idempotencyKeyField = IdempotencyKeySchema.optional().describe(
  "An earlier request's identity, to replay it without a second charge.",
);
/** Text and extraction share this ceiling (0 to 1,000,000, docs/service.md#limits). */
export const textMaxGemsField = z
  .number()
  .int()
  .min(0)
  .max(LIMITS.textMaxGems)
  .optional()
  .describe("Most Gems to reserve; default GENERATION_MAX_GEMS.");

export const modelField = (kind: string) =>
  z
    .string()
    .min(LIMITS.modelId.min)
    .max(LIMITS.modelId.max)
    .describe(`Model ID from list_models (kind ${kind}).`);

export const taskIdField = z
  .string()
  .min(1)
  .max(TASK_ID_MAX)
  .describe("Task ID from a generate tool or list_requests.");

// ---------- shared output fields ----------

/**
 * The service's task (docs/service.md#responses), typed so a client can check it, described once
 * in prose rather than field by field: it appears in five tools' output schemas.
 */
export const TaskOut = z
  .looseObject({
    id: z.string(),
    status: z.string(),
    quotedGems: z.number(),
    chargedGems: z.number(),
    releasedGems: z.number(),
    error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
    outputs: z.array(
      z.looseObject({
        index: z.number(),
        status: z.string(),
        asset: z
          .looseObject({ id: z.string(), kind: z.string(), mimeType: z.string(), url: z.string() })
          .nullable(),
      }),
    ),
  })
  .describe(
    "status: queued, processing, succeeded, partial, failed or cancelled; Gems quoted, charged, released back; output URLs are signed and expire.",
  );
/**
 * The task in a submission's or a save's result: the same Task as poll_task's `task`, typed here
 * only where a caller acts on it, so its fields are described once (in poll_task's schema).
 */
export const TaskBriefOut = z
  .looseObject({ id: z.string(), status: z.string() })
  .describe("The task, with the fields poll_task describes.");
export const savedOut = z.array(z.string()).optional();
