import { z } from "zod";
import { extractCall } from "../calls/extract-call.js";
import { LIMITS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { idempotencyKeyField, textMaxGemsField } from "../mcp/fields.js";

const E = LIMITS.extraction;

export default defineTool({
  name: "extract_video",
  title: "Analyse a video",
  description:
    "Analyses an uploaded video (ready, under 25 MiB and 120 s): an analysis, suggested frame times and segments, with the identity (idempotencyKey). It spends Gems (a reservation, settled on usage).",
  inputSchema: z.strictObject({
    videoAssetId: z
      .string()
      .min(1)
      .max(LIMITS.referenceAssetIds.idMax)
      .describe("A video's asset ID from upload_asset."),
    prompt: z.string().max(E.prompt).optional().describe("What to look for."),
    model: z
      .string()
      .min(LIMITS.modelId.min)
      .max(LIMITS.modelId.max)
      .optional()
      .describe("The extraction model; default GENERATION_EXTRACTION_MODEL."),
    maxGems: textMaxGemsField,
    idempotencyKey: idempotencyKeyField,
  }),
  outputSchema: z.object({
    idempotencyKey: z.string(),
    created: z.boolean(),
    id: z.string(),
    extraction: z
      .looseObject({ analysis: z.unknown(), durationSeconds: z.number(), frames: z.array(z.unknown()) })
      .describe("analysis, durationSeconds, frames (suggested times), segments (optional)."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (args, ctx, engine) => extractCall(args, ctx, engine),
});
