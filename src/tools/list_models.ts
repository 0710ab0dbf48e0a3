import { z } from "zod";
import { priceHint } from "../calls/paid/estimate.js";
import type { ModelList } from "../client/schemas.js";
import { MODEL_KINDS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { nextOut } from "../mcp/fields.js";
import { AFTER } from "../mcp/next-steps.js";
import { okResult } from "../mcp/results.js";

export default defineTool({
  name: "list_models",
  title: "List generation models",
  description:
    "Lists this key's models: availability, baseGems (a hint, not a quote) and the capabilities `parameters` take. Free.",
  inputSchema: z.strictObject({
    kind: z.enum(MODEL_KINDS).optional().describe("Only models of this kind."),
  }),
  outputSchema: z.object({
    models: z.array(z.looseObject({ id: z.string(), name: z.string(), kind: z.string() })),
    accountingPeriod: z.string().describe("The Gem cap's period (a UTC calendar month)."),
    next: nextOut,
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async handler(args, ctx, engine) {
    const list = await engine.client.listModels({ signal: ctx.signal });
    const models = args.kind ? list.models.filter((m) => m.kind === args.kind) : list.models;
    const text = listingOf(list, models, args.kind, engine.config.extractionModel);
    return okResult(text, { models, accountingPeriod: list.accountingPeriod, next: AFTER.models(args.kind) });
  },
});

/**
 * The text of one catalog, per kind and extraction model: the service client hands back the same
 * (frozen) parse while the service answers the same bytes (src/client/last-parse.ts), so a listing
 * is written once per catalog rather than on every call.
 */
const TEXTS = new WeakMap<object, Map<string, string>>();

function listingOf(
  list: ModelList,
  models: ModelList["models"],
  kind: string | undefined,
  extraction: string,
): string {
  const settings = `${kind ?? ""}\u0000${extraction}`;
  const texts = TEXTS.get(list.models) ?? new Map<string, string>();
  TEXTS.set(list.models, texts);
  const known = texts.get(settings);
  if (known !== undefined) return known;
  const text = listing(list, models, kind, extraction);
  texts.set(settings, text);
  return text;
}

function listing(
  list: ModelList,
  models: ModelList["models"],
  kind: string | undefined,
  extraction: string,
): string {
  const lines = models.map((m) => {
    const flags = [m.kind, m.available === false ? "unavailable" : m.available ? "available" : undefined];
    flags.push(priceHint(m));
    return `- ${m.id} (${m.name}; ${flags.filter(Boolean).join(", ")}): ${JSON.stringify(m.capabilities)}`;
  });
  return [
    `${models.length} model${models.length === 1 ? "" : "s"}${kind ? ` of kind ${kind}` : ""}; Gem caps run per ${list.accountingPeriod}.`,
    ...lines,
    kind === undefined || kind === "video" ? extractionLine(extraction, list.models) : "",
    `Next: ${AFTER.models(kind)}`,
  ]
    .filter(Boolean)
    .join("\n");
}

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
