import { z } from "zod";
import { LIMITS } from "../service/limits.js";
import { Questions } from "../tooling/ask.js";
import { idempotencyKeyField, textMaxGemsField } from "../tooling/fields.js";
import { confirmSpending, deliver, replayProgress, textMaxGems } from "../tooling/generate.js";
import { okResult } from "../tooling/results.js";
import { defineTool } from "../tooling/tool.js";

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
    id: z.string(),
    extraction: z
      .looseObject({ analysis: z.unknown(), durationSeconds: z.number(), frames: z.array(z.unknown()) })
      .describe("analysis, durationSeconds, frames (suggested times), segments (optional)."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(args, ctx, engine) {
    const { idempotencyKey, ...rest } = args;
    const maxGems = textMaxGems(engine, rest.maxGems);
    const { buildExtractBody } = await import("../service/requests.js");
    const { body, bytes } = buildExtractBody({
      ...rest,
      model: rest.model ?? engine.config.extractionModel,
      ...(maxGems === undefined ? {} : { maxGems }),
    });
    const q = new Questions(ctx);
    await confirmSpending(engine, ctx, q, {
      tool: "extract_video",
      model: body.model,
      maxGems: body.maxGems,
    });
    if (q.pending) return q.result();

    const run = await engine.ledger.run(
      {
        keyHash: engine.keyHash,
        tool: "extract_video",
        endpoint: "/api/generate/extract/video",
        bytes,
        signal: ctx.signal,
        onAttempt: replayProgress(ctx),
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      },
      (identity, sent, signal) => engine.client.extractVideo(sent, identity, signal ? { signal } : {}),
      (r) => ({ responseId: r.id }),
    );
    const { id, extraction } = run.result;
    const analysis =
      typeof extraction.analysis === "string"
        ? extraction.analysis
        : JSON.stringify(extraction.analysis, null, 2);
    const text = [
      `Extraction ${id} of a ${extraction.durationSeconds} s video (identity ${run.identity}${run.reused ? ", replayed without a second charge" : ""}).`,
      `Analysis:\n${analysis}`,
      `Frames (suggested times, not images): ${JSON.stringify(extraction.frames)}`,
      extraction.segments ? `Segments: ${JSON.stringify(extraction.segments)}` : "",
    ].filter(Boolean);
    const note = await deliver(engine, ctx, run.identity);
    if (note) text.push(note);
    return okResult(text.join("\n"), { idempotencyKey: run.identity, id, extraction });
  },
});
