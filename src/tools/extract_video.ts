import { z } from "zod";
import { endpointOf } from "../service/endpoints.js";
import { LIMITS } from "../service/limits.js";
import { defaultBudget } from "../tooling/budget.js";
import { chargedText } from "../tooling/charged.js";
import { idempotencyKeyField, textMaxGemsField } from "../tooling/fields.js";
import { paidCall } from "../tooling/paid.js";
import { okResult } from "../tooling/results.js";
import { defineTool } from "../tooling/tool.js";

const E = LIMITS.extraction;

export default defineTool({
  name: "extract_video",
  title: "Analyse a video",
  description:
    "Analyses an uploaded video (an asset from upload_asset: ready, under 25 MiB, shorter than 120 s) and returns an analysis, its duration, suggested frame times and segments. It spends Gems (a reservation sized for a long video, settled on usage). Keep the identity (idempotencyKey): calling again with the same arguments after a failure or cut-off replays the saved result without a second charge.",
  inputSchema: z.strictObject({
    videoAssetId: z
      .string()
      .min(1)
      .max(LIMITS.referenceAssetIds.idMax)
      .describe("Asset ID of an owned, ready video (1 to 128 characters) from upload_asset."),
    prompt: z.string().max(E.prompt).optional().describe(`What to look for, up to ${E.prompt} characters.`),
    model: z
      .string()
      .min(LIMITS.modelId.min)
      .max(LIMITS.modelId.max)
      .optional()
      .describe(
        "The extraction model; leave it out to use the configured one (GENERATION_EXTRACTION_MODEL).",
      ),
    maxGems: textMaxGemsField,
    idempotencyKey: idempotencyKeyField,
  }),
  outputSchema: z.object({
    idempotencyKey: z.string().describe("The request's identity; passing it again replays the saved result."),
    id: z.string().describe("The extraction's ID."),
    extraction: z
      .looseObject({ analysis: z.unknown(), durationSeconds: z.number(), frames: z.array(z.unknown()) })
      .describe("analysis, durationSeconds, frames (suggested times, not images) and optional segments."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(args, ctx, engine) {
    const { idempotencyKey, maxGems, ...rest } = args;
    const { buildExtractBody } = await import("../service/requests.js");
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
      `Extraction ${id} of a ${extraction.durationSeconds} s video (identity ${run.identity}${run.reused ? ", replayed without a second charge" : ""}).`,
      chargedText(run.result, ceiling.maxGems, run.reused),
      `Analysis:\n${analysis}`,
      `Frames (suggested times, not images): ${JSON.stringify(extraction.frames)}`,
      extraction.segments ? `Segments: ${JSON.stringify(extraction.segments)}` : "",
    ].filter(Boolean);
    return okResult(text.join("\n"), { idempotencyKey: run.identity, id, extraction });
  },
});
