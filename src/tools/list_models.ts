import { z } from "zod";
import { priceHint } from "../calls/estimate.js";
import { MODEL_KINDS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { okResult } from "../mcp/results.js";

export default defineTool({
  name: "list_models",
  title: "List generation models",
  description:
    "Lists the models this key can use: availability, baseGems (a hint, not a quote), and capabilities (ratios, resolutions, durations, reference limits) for `parameters`. Free.",
  inputSchema: z.strictObject({
    kind: z.enum(MODEL_KINDS).optional().describe("Only models of this kind."),
  }),
  outputSchema: z.object({
    models: z.array(z.looseObject({ id: z.string(), name: z.string(), kind: z.string() })),
    accountingPeriod: z.string().describe("The Gem cap's period (a UTC calendar month)."),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async handler(args, ctx, engine) {
    const list = await engine.client.listModels({ signal: ctx.signal });
    const models = args.kind ? list.models.filter((m) => m.kind === args.kind) : list.models;
    const lines = models.map((m) => {
      const flags = [m.kind, m.available === false ? "unavailable" : m.available ? "available" : undefined];
      flags.push(priceHint(m));
      return `- ${m.id} (${m.name}; ${flags.filter(Boolean).join(", ")}): ${JSON.stringify(m.capabilities)}`;
    });
    const text = [
      `${models.length} model${models.length === 1 ? "" : "s"}${args.kind ? ` of kind ${args.kind}` : ""}; Gem caps run per ${list.accountingPeriod}.`,
      ...lines,
      args.kind === undefined || args.kind === "video"
        ? extractionLine(engine.config.extractionModel, list.models)
        : "",
      "Next: pass a model's id as `model` to the matching generate tool, with parameters from its capabilities.",
    ]
      .filter(Boolean)
      .join("\n");
    return okResult(text, { models, accountingPeriod: list.accountingPeriod });
  },
});

/**
 * extract_video's model is configured (GENERATION_EXTRACTION_MODEL), and the catalog need not list
 * it (the service's catalog lists generation models): say which one it uses either way.
 */
function extractionLine(model: string, catalog: ReadonlyArray<{ id: string }>): string {
  const listed = catalog.some((m) => m.id === model)
    ? "listed above"
    : "not in this catalog, which lists generation models";
  return `Video analysis: extract_video uses ${model} (${listed}; GENERATION_EXTRACTION_MODEL sets it) unless a call names another model.`;
}
