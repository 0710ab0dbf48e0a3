import { z } from "zod";
import { extractCall } from "../calls/paid/extract-call.js";
import { ExtractRequestSchema } from "../client/schemas.js";
import { defineTool } from "../mcp/define-tool.js";
import {
  approvalField,
  approvalOut,
  idempotencyKeyField,
  nonBlank,
  textMaxGemsField,
} from "../mcp/fields.js";
import { TASK_EXECUTION } from "../mcp/mcp-task-wire-2025.js";

const X = ExtractRequestSchema.shape;

/**
 * The service gives the analysis without a fixed shape: any JSON value, each advertised with its
 * type (a schema with no type is refused or guessed at by hosts that convert tool schemas).
 */
const analysisValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.looseObject({}),
  z.array(z.unknown()),
  z.null(),
]);

export default defineTool({
  name: "extract_video",
  title: "Analyse a video",
  description:
    "Analyses an uploaded video (ready, under 25 MiB and 120 s) and returns the analysis with its identity (idempotencyKey). It spends Gems (a reservation, settled on usage).",
  // The service's extraction body (src/client/schemas.ts); the model may be left to the configuration.
  inputSchema: ExtractRequestSchema.extend({
    videoAssetId: X.videoAssetId.describe("Asset ID from upload_asset."),
    prompt: nonBlank(X.prompt.unwrap(), "leave prompt out for a general analysis, or say what to look for")
      .optional()
      .describe("What to look for."),
    model: X.model.optional().describe("Default GENERATION_EXTRACTION_MODEL."),
    maxGems: textMaxGemsField,
    idempotencyKey: idempotencyKeyField,
    approval: approvalField,
  }),
  // A quote (nothing sent) carries only `approval`.
  outputSchema: z.object({
    idempotencyKey: z.string().optional(),
    created: z.boolean().optional(),
    id: z.string().optional(),
    extraction: z
      .looseObject({ analysis: analysisValue, durationSeconds: z.number(), frames: z.array(z.unknown()) })
      .optional()
      .describe("frames are suggested times; segments is optional."),
    approval: approvalOut,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  execution: TASK_EXECUTION,
  handler: (args, ctx, engine) => extractCall(args, ctx, engine),
});
