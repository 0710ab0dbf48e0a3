/**
 * How much a paid call may spend: the ceiling (`maxGems`) to send, the operator's cap
 * (GENERATION_MAX_GEMS) and the user's approval above GENERATION_CONFIRM_ABOVE_GEMS. The service
 * has no quote endpoint (docs/service.md#overview), so a ceiling is the only way to make sure a
 * call never spends more than agreed:
 * - the cap is hard: nothing is sent with a higher maxGems (a call's larger maxGems is lowered to
 *   it, a call naming none is sent with it), and a call whose estimate is above it is refused
 *   here, nothing sent;
 * - asked (the client can ask, and the call's maxGems, else the catalog's estimate, estimate.ts,
 *   exceeds the threshold): the amount in the question is sent as `maxGems`, so a higher quote is
 *   refused (PRICE_CHANGED), never spent;
 * - not able to ask (no elicitation, or no answer within QUESTION_ANSWER_MS): nothing is sent,
 *   and the call answers a quote with an approval token (quote.ts, approval.ts); the same call
 *   with `approval` is sent with maxGems at most the amount approved;
 * - not asked (no estimate and no maxGems of the call's own, or under the threshold): the
 *   threshold is sent as `maxGems`, unless a lower ceiling applies.
 * Everything is keyed by (tool, arguments without `approval`), so one step serves every call kind,
 * a batch's total included.
 */

import { QUESTION_ANSWER_MS } from "../../config/time-limits.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import { declined, type Questions } from "../../mcp/questions.js";
import { LocalRefusal } from "../../shared/local-refusals.js";
import { gems } from "../../shared/wording.js";
import { checkApproval, consumeApproval, mintApproval } from "./approval.js";
import type { Estimate } from "./estimate.js";
import { QuoteNeeded, type QuoteReason } from "./quote.js";

export { type Estimate, estimateGems } from "./estimate.js";

export interface SpendingRequest {
  tool: string;
  model: string;
  /** The call's own `maxGems` (a batch: its total): the caller's explicit choice. */
  given: number | undefined;
  /** The highest ceiling the endpoint accepts (the text endpoints' is lower than media's). */
  limit: number;
  estimate?: () => Promise<Estimate | undefined>;
  /** The call's arguments as the tool took them: an approval is bound to them, `approval` left out. */
  args: Record<string, unknown>;
  /** The call's `approval` token, from an earlier quote of this very call. */
  approval?: string | undefined;
}

/** Why the threshold went as the ceiling without a question. */
export type Unasked = "cannot-ask" | "no-estimate" | "under";

export type Ceiling =
  /** No ceiling, the call's own maxGems, or (`capped`) the operator's cap (`lowered`: the call's maxGems it replaced). */
  | { maxGems: number | undefined; source: "none" | "given" | "capped"; lowered?: number }
  /** The confirmation threshold, sent because the user was not asked (`lowered`: the call's maxGems it replaced). */
  | { maxGems: number; source: "threshold"; why: Unasked; estimate?: number; lowered?: number }
  /** The amount the user accepted in a question, or approved with a quote's token (within the cap). */
  | { maxGems: number; source: "accepted" | "approved"; accepted: number };

/** The call's own ceiling: its maxGems within the cap and the endpoint's limit; none names the cap. */
function ownCeiling(cap: number | undefined, o: SpendingRequest, limit: number): Ceiling {
  if (o.given !== undefined) {
    return cap !== undefined && o.given > limit
      ? { maxGems: limit, source: "capped", lowered: o.given }
      : { maxGems: o.given, source: "given" };
  }
  return cap === undefined ? { maxGems: undefined, source: "none" } : { maxGems: limit, source: "capped" };
}

/** A call the catalog prices above the operator's cap: refused, nothing sent, no record. */
function aboveCap(o: SpendingRequest, estimate: Estimate, cap: number): LocalRefusal {
  return new LocalRefusal(
    "INVALID_ARGUMENT",
    `${o.tool} with model ${o.model}: the catalog's estimate is about ${gems(estimate.gems)} (${estimate.factors.join(" × ")}), above the operator's cap of ${gems(cap)} per request (GENERATION_MAX_GEMS); nothing was sent.`,
    "Ask for less (fewer outputs, a lower resolution, a cheaper model); no approval goes above the cap, only the operator can raise GENERATION_MAX_GEMS.",
  );
}

/**
 * The ceiling to send. With an `approval`, the amount it approves for this very call (checked and
 * used up, once across replicas). Else asks the user first (through `q`) when the amount at stake
 * (the call's maxGems, else the catalog's estimate) exceeds the threshold and the client can ask;
 * where it cannot, or no answer comes in time, throws QuoteNeeded (answered as a quote, nothing sent).
 */
export async function confirmSpending(
  engine: Engine,
  ctx: ToolContext,
  q: Questions,
  o: SpendingRequest,
): Promise<Ceiling> {
  const cap = engine.config.maxGems;
  const limit = Math.min(o.limit, cap ?? o.limit);
  const threshold = engine.config.confirmAboveGems;
  const own = ownCeiling(cap, o, limit);
  if (o.approval === undefined && threshold === undefined && cap === undefined) return own;
  const estimate = await o.estimate?.();
  if (cap !== undefined && estimate !== undefined && estimate.gems > cap) throw aboveCap(o, estimate, cap);
  if (o.approval !== undefined) return approved(engine, q, o, limit);
  if (threshold === undefined) return own;
  if (o.given !== undefined && o.given <= threshold) return own;
  const capped = Math.min(threshold, limit);
  const unasked = (why: Unasked, at?: number): Ceiling =>
    own.maxGems !== undefined && own.maxGems <= capped
      ? own
      : {
          maxGems: capped,
          source: "threshold",
          why,
          ...(at === undefined ? {} : { estimate: at }),
          ...(o.given !== undefined && o.given > capped ? { lowered: o.given } : {}),
        };
  const amount = o.given ?? estimate?.gems;
  if (amount === undefined) return unasked(ctx.canElicit ? "no-estimate" : "cannot-ask");
  if (amount <= threshold) return unasked("under", amount);
  // A call the catalog prices under the threshold goes with the threshold as its ceiling rather
  // than a quote for its larger maxGems, where nobody can be asked: nothing above it is spent.
  if (!ctx.canElicit && estimate !== undefined && estimate.gems <= threshold) return unasked("cannot-ask");
  const sent = Math.min(amount, limit);
  const quote = async (reason: QuoteReason) =>
    new QuoteNeeded({
      tool: o.tool,
      model: o.model,
      gems: sent,
      threshold,
      reason,
      estimate,
      given: o.given,
      approval: await mintApproval(engine, { tool: o.tool, args: o.args }, sent),
    });
  if (!ctx.canElicit) throw await quote("cannot-ask");
  const asked = question(o, { amount, sent, threshold, estimate });
  const answer = await q.confirmWithin("spend", asked, amount, QUESTION_ANSWER_MS);
  if (answer === "unanswered") throw await quote("unanswered");
  if (answer === "no") throw declined(`to spend Gems on ${o.tool}`);
  return { maxGems: sent, source: "accepted", accepted: amount };
}

/**
 * The amount an approval token grants this call, within the cap. The token is used up here, unless
 * another question of the round (roots) is pending: the call then sends nothing this round, and
 * the round that sends uses it.
 */
async function approved(engine: Engine, q: Questions, o: SpendingRequest, limit: number): Promise<Ceiling> {
  const grant = await checkApproval(engine, { tool: o.tool, args: o.args }, o.approval ?? "");
  if (!q.pending) await consumeApproval(engine, grant);
  return { maxGems: Math.min(grant.gems, limit), source: "approved", accepted: grant.gems };
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
  const lower =
    a.sent < a.amount
      ? ` The operator's cap (GENERATION_MAX_GEMS) lowers the ceiling to ${gems(a.sent)}.`
      : "";
  return `${o.tool} with model ${o.model} may spend ${cost}, above your confirmation threshold of ${gems(a.threshold)}.${lower} If you go ahead, ${gems(a.sent)} is sent as the ceiling (maxGems): a higher quote is refused and nothing above it is spent. Go ahead?`;
}

const WHY: Record<Unasked, (estimate?: number) => string> = {
  "cannot-ask": () => "this client cannot ask the user (no elicitation)",
  "no-estimate": () => "the catalog gives no estimate for this call",
  under: (estimate) => `the catalog's estimate (about ${gems(estimate ?? 0)}) is under it`,
};

/** What a result says about the ceiling it was sent with, where it was not the caller's own. */
export function ceilingNote(engine: Engine, ceiling: Ceiling): string | undefined {
  if (ceiling.source === "accepted" || ceiling.source === "approved") {
    const who = ceiling.source === "accepted" ? "the most the user accepted" : "the amount the user approved";
    return `Sent with maxGems ${ceiling.maxGems}, ${who}: the service refuses a higher quote rather than spend it.`;
  }
  if (ceiling.source === "capped") {
    const lowered =
      ceiling.lowered === undefined ? "" : ` (the call's maxGems ${ceiling.lowered} was lowered to it)`;
    return `Sent with maxGems ${ceiling.maxGems}, the operator's cap per request (GENERATION_MAX_GEMS)${lowered}: the service refuses a higher quote rather than spend it.`;
  }
  if (ceiling.source !== "threshold") return undefined;
  const lowered =
    ceiling.lowered === undefined ? "" : `; the call's maxGems ${ceiling.lowered} was lowered to it`;
  return `Sent with maxGems ${ceiling.maxGems}, your confirmation threshold (GENERATION_CONFIRM_ABOVE_GEMS ${engine.config.confirmAboveGems}), without asking: ${WHY[ceiling.why](ceiling.estimate)}${lowered}; the service refuses a higher quote (PRICE_CHANGED) rather than spend it.`;
}

/** How to go above a ceiling: a higher maxGems, which the user is asked about or quoted (within the cap). */
function higher(engine: Engine): string {
  const cap = engine.config.maxGems;
  const within = cap === undefined ? "" : ` (never above the operator's cap, GENERATION_MAX_GEMS ${cap})`;
  if (engine.config.confirmAboveGems === undefined) {
    return `tell the user the price; if they agree, call again with maxGems set to it${within}`;
  }
  return `call again without approval and with maxGems set to the most the user may spend${within}: the user is asked about that amount first, or, where this client cannot ask, the answer is a quote with an approval token to show the user and pass back as approval`;
}

/**
 * What a PRICE_CHANGED says: what a ceiling of ours was and that nothing was charged (`note`),
 * and how to go above it (`next`): the question or the quote with its approval token, never
 * above the operator's cap. The caller's own ceiling gets the same way up, without a note.
 */
export function priceRefusal(engine: Engine, ceiling: Ceiling): { note?: string; next: string } {
  if (ceiling.source === "accepted" || ceiling.source === "approved") {
    const how = ceiling.source === "accepted" ? "accepted" : "approved";
    return {
      note: `The quote was above the ${gems(ceiling.accepted)} the user ${how}${ceiling.maxGems < ceiling.accepted ? ` (sent as maxGems ${ceiling.maxGems}, the operator's cap GENERATION_MAX_GEMS)` : ", sent as maxGems"}; nothing was charged.`,
      next: `tell the user the price is higher than they ${how}; to go ahead, ${higher(engine)}; or change the request (fewer outputs, a lower resolution).`,
    };
  }
  if (ceiling.source === "capped") {
    return {
      note: `The ceiling of ${gems(ceiling.maxGems ?? 0)} was the operator's cap per request (GENERATION_MAX_GEMS); nothing was charged.`,
      next: "no call goes above GENERATION_MAX_GEMS, approved or not: change the request to cost less (fewer outputs, a lower resolution, a cheaper model), or the operator raises the setting.",
    };
  }
  if (ceiling.source !== "threshold")
    return { next: `${higher(engine)}; or change the request to cost less.` };
  const threshold = engine.config.confirmAboveGems;
  const note = `The ceiling of ${gems(ceiling.maxGems)} was GENERATION_CONFIRM_ABOVE_GEMS (${threshold}), sent as maxGems because ${WHY[ceiling.why](ceiling.estimate)}; nothing was charged.`;
  return { note, next: `to spend more than GENERATION_CONFIRM_ABOVE_GEMS, ${higher(engine)}.` };
}
