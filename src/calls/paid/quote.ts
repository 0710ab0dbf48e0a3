/**
 * A quote: the answer of a paid call above GENERATION_CONFIRM_ABOVE_GEMS where the user could not
 * be asked (no elicitation, or no answer in time). Nothing was sent and nothing recorded; the
 * answer names the amount and its factors, what to tell the user, and an approval token
 * (approval.ts) that the same call takes to go ahead with `maxGems` at most that amount. It is
 * not an error (the call did what it should), and it is whole in the text and in
 * structuredContent (`approval`: the token and amount, with what the quote says), since some hosts show their model only the one.
 */
import type { ToolOutcome } from "../../mcp/define-tool.js";
import { okResult } from "../../mcp/results.js";
import { gems } from "../../shared/wording.js";
import type { Estimate } from "./estimate.js";

/** Why nobody was asked. */
export type QuoteReason = "cannot-ask" | "unanswered";

const REASON: Record<QuoteReason, string> = {
  "cannot-ask": "this client cannot ask the user (it declares no elicitation)",
  unanswered: "the user did not answer the question in time (the host may not show it)",
};

export interface QuoteFacts {
  tool: string;
  model: string;
  /** The amount to approve: the most the call will be sent with as maxGems. */
  gems: number;
  threshold: number;
  reason: QuoteReason;
  estimate: Estimate | undefined;
  /** The call's own maxGems, when it named one. */
  given: number | undefined;
  approval: { token: string; gems: number; expiresAt: string };
}

/** Thrown by the spending step (spending.ts) and answered by `refused` (paid-call.ts) as a quote. */
export class QuoteNeeded extends Error {
  override readonly name = "QuoteNeeded";
  constructor(readonly facts: QuoteFacts) {
    super(`a quote of ${facts.gems} Gems needs the user's approval`);
  }
}

/** The quote as a result: text and structuredContent carry the same facts and the token. */
export function quoteResult(f: QuoteFacts): ToolOutcome {
  const basis =
    f.given !== undefined
      ? `up to ${gems(f.gems)} (the maxGems of this call${f.estimate ? `; the catalog's estimate is about ${gems(f.estimate.gems)}` : ""})`
      : `about ${gems(f.gems)} (the catalog's estimate; the service sets the real quote when it receives the request)`;
  const factors = f.estimate?.factors;
  const tell = `${f.tool} with model ${f.model} would spend ${basis}${factors ? `: ${factors.join(" × ")}` : ""}, above the confirmation threshold of ${gems(f.threshold)}. Approve spending up to ${gems(f.gems)}?`;
  const next = `if the user approves, call ${f.tool} again with exactly the same arguments plus approval: "${f.approval.token}" (once, until ${f.approval.expiresAt}); it is sent with maxGems ${f.gems}, so a higher quote is refused and nothing above ${gems(f.gems)} is spent. If the user declines, do nothing: nothing was spent. To ask for a different amount, call again without approval and with maxGems set to it.`;
  const text = [
    `QUOTE: nothing was sent and no Gems were spent: ${REASON[f.reason]}.`,
    `Tell the user: ${tell}`,
    `Next: ${next}`,
    `Approval: ${JSON.stringify({ token: f.approval.token, gems: f.approval.gems })}`,
  ].join("\n");
  return okResult(text, {
    approval: {
      token: f.approval.token,
      gems: f.approval.gems,
      tool: f.tool,
      threshold: f.threshold,
      reason: REASON[f.reason],
      ...(factors ? { factors } : {}),
      tell,
      next,
      expiresAt: f.approval.expiresAt,
    },
  });
}
