import { z } from "zod";
import { defaultBudget } from "../calls/budget.js";
import { chargedText } from "../calls/charged.js";
import { paidCall } from "../calls/paid-call.js";
import { endpointOf } from "../client/endpoints.js";
import { ExtractRequestSchema } from "../client/schemas.js";
import { LIMITS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { idempotencyKeyField, nonBlank, textMaxGemsField } from "../mcp/fields.js";
import { okResult } from "../mcp/results.js";

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
    "Analyses an uploaded video (ready, under 25 MiB and 120 s): an analysis, suggested frame times and segments, with the identity (idempotencyKey). It spends Gems (a reservation, settled on usage).",
  // The service's extraction body (src/client/schemas.ts); the model may be left to the configuration.
  inputSchema: ExtractRequestSchema.extend({
    videoAssetId: X.videoAssetId.describe("A video's asset ID from upload_asset."),
    prompt: nonBlank(X.prompt.unwrap(), "leave prompt out for a general analysis, or say what to look for")
      .optional()
      .describe("What to look for."),
    model: X.model.optional().describe("The extraction model; default GENERATION_EXTRACTION_MODEL."),
    maxGems: textMaxGemsField,
    idempotencyKey: idempotencyKeyField,
  }),
  outputSchema: z.object({
    idempotencyKey: z.string(),
    id: z.string(),
    extraction: z
      .looseObject({ analysis: analysisValue, durationSeconds: z.number(), frames: z.array(z.unknown()) })
      .describe("frames are suggested times; segments is optional."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(args, ctx, engine) {
    const { idempotencyKey, maxGems, ...rest } = args;
    const { buildExtractBody } = await import("../client/requests.js");
    const paid = await paidCall(engine, ctx, {
      tool: "extract_video",
      endpoint: endpointOf("extraction"),
      build: (ceiling) =>
        buildExtractBody({
          ...rest,
          model: rest.model ?? engine.config.extractionModel,
          ...(ceiling === undefined ? {} : { maxGems: ceiling }),
        }),
      maxGems,
      maxGemsLimit: LIMITS.textMaxGems,
      idempotencyKey,
      budget: defaultBudget(),
      send: (identity, sent, signal) => engine.client.extractVideo(sent, identity, signal ? { signal } : {}),
      ref: (r) => ({ responseId: r.id }),
    });
    if (paid.kind === "answered") return paid.result;
    const { run, ceiling } = paid;
    const { id, extraction } = run.result;
    const analysis =
      typeof extraction.analysis === "string"
        ? extraction.analysis
        : JSON.stringify(extraction.analysis, null, 2);
    const text = [
      `Extraction ${id} of a video of ${extraction.durationSeconds} s (identity ${run.identity}${run.reused ? ", replayed without a second charge" : ""}).`,
      chargedText(run.result, ceiling.maxGems, run.reused),
      `Analysis:\n${analysis}`,
      `Frames (suggested times, not images): ${JSON.stringify(extraction.frames)}`,
      extraction.segments ? `Segments: ${JSON.stringify(extraction.segments)}` : "",
    ].filter(Boolean);
    return okResult(text.join("\n"), { idempotencyKey: run.identity, id, extraction });
  },
});
