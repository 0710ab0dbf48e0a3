/**
 * What a submission will cost by the model catalog, before anything is sent. The catalog's
 * `baseGems` is a hint, not a quote (docs/service.md#responses): the service sets the real quote
 * when it receives the request. An estimate uses every cost factor the entry publishes:
 * - `baseGems`, per output (the estimate exists only where the entry has it: image models today);
 * - `parameters.outputCount` (1 when not given);
 * - every `<parameter>Multipliers` table of its capabilities (`resolutionMultipliers`, and so a
 *   `durationMultipliers` or any other the catalog lists): the entry for the value the call gives,
 *   or, when it gives none, for the model's first listed value (its `<parameter>s` list, the
 *   default); where the table has no entry for that value, its highest.
 * Rounded up to whole Gems. Each factor is named, so the question to the user says what it used.
 */
import type { Model } from "../../client/schemas.js";
import type { Engine } from "../../mcp/context.js";
import { gems } from "../../shared/wording.js";
import { modelCatalog } from "../catalog/models.js";

export interface Estimate {
  gems: number;
  /** The factors multiplied, in words: "baseGems 8", "outputCount 4", "×4 for resolution 4K (…)". */
  factors: string[];
}

/** A capability that maps values to numbers, such as `resolutionMultipliers`. */
function numberTable(v: unknown): Record<string, number> | undefined {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  const entries = Object.entries(v);
  if (entries.length === 0) return undefined;
  return entries.every(([, n]) => typeof n === "number" && Number.isFinite(n) && n >= 0)
    ? (v as Record<string, number>)
    : undefined;
}

/** The value a multiplier applies to, and how it was chosen. */
function chosenValue(entry: Model, parameter: string, given: unknown): { value?: string; how: string } {
  if (typeof given === "string" || typeof given === "number") return { value: String(given), how: "" };
  const listed = entry.capabilities[`${parameter}s`];
  const first = Array.isArray(listed) ? listed[0] : undefined;
  if (typeof first === "string" || typeof first === "number") {
    return { value: String(first), how: `; none given, so the model's first listed ${parameter}` };
  }
  return { how: `; none given, so its highest` };
}

/** The factor of one multiplier table for this call. */
function multiplier(entry: Model, parameter: string, table: Record<string, number>, given: unknown) {
  const { value, how } = chosenValue(entry, parameter, given);
  const highest = Math.max(...Object.values(table));
  const listed = value === undefined ? undefined : table[value];
  const factor = listed ?? highest;
  const note = value !== undefined && listed === undefined ? `; ${value} is not in it, so its highest` : how;
  const named = value === undefined ? parameter : `${parameter} ${value}`;
  return { factor, text: `${factor} for ${named} (its ${parameter}Multipliers${note})` };
}

/** Each `<parameter>Multipliers` table of an entry, with the parameter it prices. */
function multiplierTables(entry: Model): { parameter: string; table: Record<string, number> }[] {
  const out: { parameter: string; table: Record<string, number> }[] = [];
  for (const [name, value] of Object.entries(entry.capabilities)) {
    const parameter = /^([A-Za-z]\w*)Multipliers$/.exec(name)?.[1];
    const table = parameter === undefined ? undefined : numberTable(value);
    if (parameter !== undefined && table !== undefined) out.push({ parameter, table });
  }
  return out;
}

/**
 * The catalog's price hint of an entry in words: "about 8 Gems each (resolution: ×1 at 1K, ×2 at
 * 2K, ×4 at 4K)"; undefined without baseGems.
 */
export function priceHint(entry: Model): string | undefined {
  if (entry.baseGems === undefined) return undefined;
  const tables = multiplierTables(entry).map(
    ({ parameter, table }) =>
      `${parameter}: ${Object.entries(table)
        .map(([v, f]) => `×${f} at ${v}`)
        .join(", ")}`,
  );
  const each = `about ${gems(entry.baseGems)} each`;
  return tables.length === 0 ? each : `${each} (${tables.join("; ")})`;
}

/** The estimate for `parameters` on a catalog entry; undefined where the entry has no baseGems. */
export function estimateFrom(entry: Model, parameters: Record<string, unknown>): Estimate | undefined {
  if (entry.baseGems === undefined) return undefined;
  const count = typeof parameters.outputCount === "number" ? parameters.outputCount : 1;
  let total = entry.baseGems * count;
  const factors = [`baseGems ${entry.baseGems}`, `outputCount ${count}`];
  for (const { parameter, table } of multiplierTables(entry)) {
    const m = multiplier(entry, parameter, table, parameters[parameter]);
    total *= m.factor;
    factors.push(m.text);
  }
  return { gems: Math.ceil(total), factors };
}

/** The estimate by this key's cached catalog; undefined where it has none or cannot be read. */
export async function estimateGems(
  engine: Engine,
  model: string,
  parameters: Record<string, unknown>,
): Promise<Estimate | undefined> {
  try {
    const entry = (await modelCatalog(engine)).find((m) => m.id === model);
    return entry === undefined ? undefined : estimateFrom(entry, parameters);
  } catch {
    return undefined;
  }
}
