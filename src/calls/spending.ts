/**
 * How much a paid call may spend: the ceiling (`maxGems`) to send, and the user's confirmation
 * above GENERATION_CONFIRM_ABOVE_GEMS. The service has no quote endpoint (docs/service.md#overview),
 * so a ceiling is the only way to make sure a call never spends more than agreed:
 * whenever the user was not asked, the threshold travels as `maxGems` and a higher quote is
 * refused with PRICE_CHANGED instead of being spent.
 */

import { gems } from "../client/wording.js";
import type { Engine, ToolContext } from "../mcp/context.js";
import type { Questions } from "../mcp/questions.js";
import { declined } from "../mcp/results.js";
import { modelCatalog } from "./models.js";

/** baseGems × outputCount for image models; undefined where the catalog has no hint. */
export async function estimateGems(
  engine: Engine,
  model: string,
  parameters: Record<string, unknown>,
): Promise<number | undefined> {
  try {
    const entry = (await modelCatalog(engine)).find((m) => m.id === model);
    if (entry?.baseGems === undefined) return undefined;
    const count = typeof parameters.outputCount === "number" ? parameters.outputCount : 1;
    return entry.baseGems * count;
  } catch {
    return undefined;
  }
}

export interface SpendingRequest {
  tool: string;
  model: string;
  /** The call's own `maxGems`: the caller's explicit choice. */
  given: number | undefined;
  /** The highest ceiling the endpoint accepts (the text endpoints' is lower than media's). */
  limit: number;
  estimate?: () => Promise<number | undefined>;
}

export interface Ceiling {
  /** The `maxGems` to send, if any. */
  maxGems: number | undefined;
  /** The ceiling is the confirmation threshold, sent because the user was not asked. */
  fromThreshold: boolean;
}

/** GENERATION_MAX_GEMS, where the call names none, within the endpoint's limit. */
const configured = (engine: Engine, limit: number): number | undefined =>
  engine.config.maxGems === undefined ? undefined : Math.min(engine.config.maxGems, limit);

/**
 * The ceiling to send, asking the user first (through `q`) only when an estimate exceeds the
 * threshold and the client can ask. With no estimate (chat, video, audio) or one under the
 * threshold, nobody is asked: the threshold travels as `maxGems`, so the service refuses a higher
 * quote (PRICE_CHANGED) instead of spending it, and the result says so (`ceilingNote`). An explicit
 * `maxGems` at or under the threshold needs no question; above it, a client that can ask is asked,
 * and one that cannot is taken at its word (the refusal note tells the assistant to get the
 * user's agreement before passing it).
 */
export async function confirmSpending(
  engine: Engine,
  ctx: ToolContext,
  q: Questions,
  o: SpendingRequest,
): Promise<Ceiling> {
  const threshold = engine.config.confirmAboveGems;
  const fallback = o.given ?? configured(engine, o.limit);
  if (threshold === undefined) return { maxGems: fallback, fromThreshold: false };
  if (o.given !== undefined && (o.given <= threshold || !ctx.canElicit)) {
    return { maxGems: o.given, fromThreshold: false };
  }
  const capped = Math.min(threshold, o.limit);
  const unasked = (): Ceiling =>
    fallback !== undefined && fallback < capped
      ? { maxGems: fallback, fromThreshold: false }
      : { maxGems: capped, fromThreshold: capped === threshold };
  if (!ctx.canElicit) return unasked();
  const estimate = o.given === undefined ? await o.estimate?.() : undefined;
  if (o.given === undefined && (estimate === undefined || estimate <= threshold)) return unasked();
  const cost =
    estimate !== undefined
      ? `about ${gems(estimate)} (an estimate from the catalog's baseGems; the service sets the real quote when it receives the request)`
      : `up to ${gems(o.given ?? 0)} (your maxGems)`;
  const ceiling = fallback !== undefined ? ` It will refuse to spend more than ${gems(fallback)}.` : "";
  const answer = q.confirm(
    "spend",
    `${o.tool} with model ${o.model} may spend ${cost}, above your confirmation threshold of ${gems(threshold)}.${ceiling} Go ahead?`,
  );
  if (answer === "no") throw declined(`to spend Gems on ${o.tool}`);
  return { maxGems: fallback, fromThreshold: false };
}

/** What a result sent under the threshold ceiling says about it; nothing for any other ceiling. */
export function ceilingNote(engine: Engine, ceiling: Ceiling): string | undefined {
  if (!ceiling.fromThreshold) return undefined;
  return `Sent with maxGems ${ceiling.maxGems}, your confirmation threshold (GENERATION_CONFIRM_ABOVE_GEMS ${engine.config.confirmAboveGems}), without asking: no estimate above it called for a question, and the service refuses a higher quote (PRICE_CHANGED) rather than spend it.`;
}

/** What a refusal under the threshold ceiling adds: how to go above it. */
export function thresholdNote(engine: Engine, maxGems: number | undefined): string {
  return `The ceiling of ${maxGems === undefined ? "maxGems" : gems(maxGems)} was GENERATION_CONFIRM_ABOVE_GEMS (${engine.config.confirmAboveGems}), sent as maxGems because the user was not asked; nothing was charged. To go above it, ask the user, then call again with maxGems set to the amount they agree to, or raise GENERATION_CONFIRM_ABOVE_GEMS.`;
}
