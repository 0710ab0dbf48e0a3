/** Argument and output fields several tools share, described once. */
import { z } from "zod";
import { LIMITS } from "../service/limits.js";
import { IdempotencyKeySchema } from "../service/schemas.js";
import { MAX_WAIT_SECONDS } from "./bounds.js";

export { MAX_WAIT_SECONDS };

// ---------- argument fields shared by several tools ----------

export const waitField = z
  .number()
  .min(0)
  .max(MAX_WAIT_SECONDS)
  .optional()
  .describe(
    "Seconds (0 to 600) to keep polling before returning; default is the server's (45, under the ~60 s hosts allow a call). A wait that runs out returns the task as it stands, never an error.",
  );
export const saveField = z
  .boolean()
  .optional()
  .describe(
    "When true and the task is finished, write its outputs into the output directory (GENERATION_OUTPUT_DIR) as {taskId}-{index}.{ext} and return the paths.",
  );
export const idempotencyKeyField = IdempotencyKeySchema.optional().describe(
  "Optional identity for this request (1 to 128 of letters, digits, _ . : -). Omit it and one is made and returned; reuse it only to replay the same request, never for a different one.",
);
/** Text and extraction share this ceiling (the interface's 0 to 1,000,000). */
export const textMaxGemsField = z
  .number()
  .int()
  .min(0)
  .max(LIMITS.textMaxGems)
  .optional()
  .describe(
    "Most Gems to reserve, 0 to 1,000,000; above it the service refuses with PRICE_CHANGED. Defaults to GENERATION_MAX_GEMS.",
  );

export const modelField = (kind: string) =>
  z
    .string()
    .min(LIMITS.modelId.min)
    .max(LIMITS.modelId.max)
    .describe(`Public ${kind} model ID from list_models (1 to 150 characters).`);

// ---------- shared output fields ----------

export const TaskOut = z
  .looseObject({
    id: z.string().describe("Task ID: keep it to poll."),
    status: z.string().describe("queued, processing, succeeded, partial, failed or cancelled."),
    quotedGems: z.number().describe("Gems quoted."),
    chargedGems: z.number().describe("Gems charged."),
    releasedGems: z.number().describe("Gems released back."),
    error: z
      .looseObject({ code: z.string(), message: z.string() })
      .nullable()
      .describe("Sanitized error or null."),
    outputs: z
      .array(
        z.looseObject({
          index: z.number(),
          status: z.string(),
          asset: z
            .looseObject({ id: z.string(), kind: z.string(), mimeType: z.string(), url: z.string() })
            .nullable(),
        }),
      )
      .describe("Outputs; asset.url is a signed URL that expires."),
  })
  .describe("The service's task as it stands.");
export const savedOut = z.array(z.string()).optional().describe("Paths written when save was true.");

export const taskIdField = z
  .string()
  .min(1)
  .max(256)
  .describe("Task ID returned by a generate tool (1 to 256 characters).");
