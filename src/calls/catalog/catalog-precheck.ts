/**
 * The catalog's verdict before the schema's, for a call whose arguments the schema refused
 * (src/mcp/tool-call.ts runs a tool's `precheck` then): the tools that name a model
 * (generate_*, chat, extract_video) have it judged here from the raw arguments.
 */
import type { Engine } from "../../mcp/context.js";
import type { ArgumentError } from "../../shared/local-refusals.js";
import {
  type CatalogChecked,
  type CheckedKind,
  catalogErrors,
  catalogOrNothing,
  mayReplay,
} from "./catalog-check.js";

/**
 * The catalog's judgement of a call whose arguments its schema refused (src/mcp/tool-call.ts): what
 * it can read of them is judged anyway, so one answer names an unknown model first, before a schema
 * rule that depends on the model, and every other error beside it (references wait for parsed
 * arguments). A replay the ledger holds is judged by the service, as in catalogCheck.
 */
export async function catalogPrecheck(
  engine: Engine,
  tool: string,
  kind: CheckedKind,
  raw: Record<string, unknown>,
): Promise<ArgumentError[]> {
  // An empty model is the schema's to name (its bound), not the catalog's.
  if (typeof raw.model !== "string" || raw.model === "") return [];
  const models = await catalogOrNothing(engine);
  if (models === undefined) return [];
  const p = raw.parameters;
  const request: CatalogChecked = {
    model: raw.model,
    parameters:
      typeof p === "object" && p !== null && !Array.isArray(p) ? (p as Record<string, unknown>) : {},
    operation: typeof raw.operation === "string" ? raw.operation : undefined,
  };
  const errors = catalogErrors(models, kind, request, engine.config.extractionModel, false);
  if (errors.length === 0) return [];
  const key = typeof raw.idempotencyKey === "string" ? raw.idempotencyKey : undefined;
  return (await mayReplay(engine, tool, raw.model, key)) ? [] : errors;
}
