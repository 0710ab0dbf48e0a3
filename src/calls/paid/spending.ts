/**
 * How much a paid call may spend: the ceiling (`maxGems`) to send, and the user's confirmation
 * above GENERATION_CONFIRM_ABOVE_GEMS. The service has no quote endpoint (docs/service.md#overview),
 * so a ceiling is the only way to make sure a call never spends more than agreed:
 * - asked (the client can ask, and an estimate from the catalog, estimate.ts, or the call's own
 *   maxGems exceeds the threshold): the amount in the question is sent as `maxGems` (or a lower
 *   GENERATION_MAX_GEMS), so a higher quote is refused (PRICE_CHANGED), never spent;
 * - not asked (the client cannot ask, there is no estimate, or it is under the threshold): the
 *   threshold is sent as `maxGems`, unless a lower ceiling applies. A client that cannot ask never
 *   spends above the threshold, whatever maxGems it passes: nobody agreed to more.
 */

import type { Engine, ToolContext } from "../../mcp/context.js";
import { declined, type Questions } from "../../mcp/questions.js";
import { gems } from "../../shared/wording.js";
import type { Estimate } from "./estimate.js";

export { type Estimate, estimateGems } from "./estimate.js";

export interface SpendingRequest {
  tool: string;
  model: string;
  /** The call's own `maxGems`: the caller's explicit choice. */
  given: number | undefined;
  /** The highest ceiling the endpoint accepts (the text endpoints' is lower than media's). */
  limit: number;
  estimate?: () => Promise<Estimate | undefined>;
  /** The call's arguments as the tool took them (an approval token is bound to them, itself left out). */
  args?: Record<string, unknown>;
  /** The call's `approval` token, from an earlier quote of this very call (approval tokens: a parallel change). */
  approval?: string | undefined;
}

/** Why the threshold went as the ceiling without a question. */
export type Unasked = "cannot-ask" | "no-estimate" | "under";

export type Ceiling =
  /** No ceiling, the call's own maxGems, or GENERATION_MAX_GEMS. */
  | { maxGems: number | undefined; source: "none" | "given" | "configured" }
  /** The confirmation threshold, sent because the user was not asked (`lowered`: the call's maxGems it replaced). */
  | { maxGems: number; source: "threshold"; why: Unasked; estimate?: number; lowered?: number }
  /** The amount the user accepted (or a lower GENERATION_MAX_GEMS). */
  | { maxGems: number; source: "accepted"; accepted: number };

/** The call's own ceiling: its maxGems, else GENERATION_MAX_GEMS, within the endpoint's limit. */
function ownCeiling(engine: Engine, o: SpendingRequest): Ceiling {
  if (o.given !== undefined) return { maxGems: o.given, source: "given" };
  const configured = engine.config.maxGems;
  if (configured === undefined) return { maxGems: undefined, source: "none" };
  return { maxGems: Math.min(configured, o.limit), source: "configured" };
}

/**
 * The ceiling to send, asking the user first (through `q`) only when the client can ask and the
 * amount at stake (the call's maxGems, else the catalog's estimate) exceeds the threshold.
 */
export async function confirmSpending(
  engine: Engine,
  ctx: ToolContext,
  q: Questions,
  o: SpendingRequest,
): Promise<Ceiling> {
  const threshold = engine.config.confirmAboveGems;
  const own = ownCeiling(engine, o);
  if (threshold === undefined) return own;
  if (o.given !== undefined && o.given <= threshold) return own;
  const capped = Math.min(threshold, o.limit);
  const unasked = (why: Unasked, estimate?: number): Ceiling =>
    own.maxGems !== undefined && own.maxGems < capped
      ? own
      : {
          maxGems: capped,
          source: "threshold",
          why,
          ...(estimate === undefined ? {} : { estimate }),
          ...(o.given !== undefined && o.given > capped ? { lowered: o.given } : {}),
        };
  if (!ctx.canElicit) return unasked("cannot-ask");
  const estimate = await o.estimate?.();
  const amount = o.given ?? estimate?.gems;
  if (amount === undefined) return unasked("no-estimate");
  if (amount <= threshold) return unasked("under", amount);
  const sent = Math.min(amount, own.maxGems ?? amount, o.limit);
  const answer = q.confirm("spend", question(o, { amount, sent, threshold, estimate }), amount);
  if (answer === "no") throw declined(`to spend Gems on ${o.tool}`);
  return { maxGems: sent, source: "accepted", accepted: amount };
}

interface Asking {
  amount: number;
  sent: number;
  threshold: number;
  estimate: Estimate | undefined;
}

/** The question: the amount, the factors it came from, and that it will be the ceiling. */
function question(o: SpendingRequest, a: Asking): string {
  const factors = a.estimate ? a.estimate.factors.join(" × ") : "";
  const cost =
    o.given !== undefined
      ? `up to ${gems(o.given)} (the maxGems of this call${a.estimate ? `; the catalog's estimate is about ${gems(a.estimate.gems)}: ${factors}` : ""})`
      : `about ${gems(a.amount)} (the catalog's estimate: ${factors}; the service sets the real quote when it receives the request)`;
  const lower = a.sent < a.amount ? ` GENERATION_MAX_GEMS lowers the ceiling to ${gems(a.sent)}.` : "";
  return `${o.tool} with model ${o.model} may spend ${cost}, above your confirmation threshold of ${gems(a.threshold)}.${lower} If you go ahead, ${gems(a.sent)} is sent as the ceiling (maxGems): a higher quote is refused and nothing above it is spent. Go ahead?`;
}

const WHY: Record<Unasked, (estimate?: number) => string> = {
  "cannot-ask": () => "this client cannot ask the user (no elicitation)",
  "no-estimate": () => "the catalog gives no estimate for this call",
  under: (estimate) => `the catalog's estimate (about ${gems(estimate ?? 0)}) is under it`,
};

/** What a result says about the ceiling it was sent with, where it was not the caller's own. */
export function ceilingNote(engine: Engine, ceiling: Ceiling): string | undefined {
  if (ceiling.source === "accepted") {
    return `Sent with maxGems ${ceiling.maxGems}, the most the user accepted: the service refuses a higher quote rather than spend it.`;
  }
  if (ceiling.source !== "threshold") return undefined;
  const lowered =
    ceiling.lowered === undefined ? "" : `; the call's maxGems ${ceiling.lowered} was lowered to it`;
  return `Sent with maxGems ${ceiling.maxGems}, your confirmation threshold (GENERATION_CONFIRM_ABOVE_GEMS ${engine.config.confirmAboveGems}), without asking: ${WHY[ceiling.why](ceiling.estimate)}${lowered}; the service refuses a higher quote (PRICE_CHANGED) rather than spend it.`;
}

/**
 * What a PRICE_CHANGED under a ceiling of ours says: what the ceiling was, that nothing was
 * charged, and what to do instead (`next`). Nothing for the caller's own ceiling, where the
 * service's own advice stands.
 */
export function priceRefusal(engine: Engine, ceiling: Ceiling): { note: string; next: string } | undefined {
  if (ceiling.source === "accepted") {
    return {
      note: `The quote was above the ${gems(ceiling.accepted)} the user accepted${ceiling.maxGems < ceiling.accepted ? ` (sent as maxGems ${ceiling.maxGems}, GENERATION_MAX_GEMS)` : ", sent as maxGems"}; nothing was charged.`,
      next: "tell the user the price is higher than they accepted; to go ahead, call again with maxGems set to a higher amount (the user is asked about it first), or change the request (fewer outputs, a lower resolution).",
    };
  }
  if (ceiling.source !== "threshold") return undefined;
  const threshold = engine.config.confirmAboveGems;
  const note = `The ceiling of ${gems(ceiling.maxGems)} was GENERATION_CONFIRM_ABOVE_GEMS (${threshold}), sent as maxGems because ${WHY[ceiling.why](ceiling.estimate)}; nothing was charged.`;
  const next =
    ceiling.why === "cannot-ask"
      ? "this client cannot ask the user, so no call spends above GENERATION_CONFIRM_ABOVE_GEMS, whatever its maxGems: tell the user, who may raise the setting (or use a host that can ask), or change the request to cost less."
      : "to spend more than GENERATION_CONFIRM_ABOVE_GEMS, call again with maxGems set to the most the user may spend: this server asks the user about that amount first. Or the user raises the setting.";
  return { note, next };
}
