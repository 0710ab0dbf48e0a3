import { buildUnder, canonicalJson } from "../../client/requests.js";
import { LIMITS } from "../../config/service-limits.js";
import { callBudget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import type { ToolOutcome } from "../../mcp/define-tool.js";
import { Questions } from "../../mcp/questions.js";
import { gems } from "../../shared/wording.js";
import { handBack } from "../mcp-task/mcp-task-background.js";
import { type CheckedItem, checkItems, type ItemInput } from "./batch-check.js";
import { divideCeiling } from "./batch-share.js";
import { type BatchWork, batchSteps } from "./batch-steps.js";
import { deliver, refused } from "./paid-call.js";
import { type Ceiling, confirmSpending } from "./spending.js";

export { BATCH_TOOLS, type BatchTool, type ItemInput } from "./batch-check.js";

export interface BatchArgs {
  items: ItemInput[];
  maxGems?: number | undefined;
  approval?: string | undefined;
  idempotencyKey?: string | undefined;
  wait?: number | undefined;
  /** The call's arguments as given (an approval is bound to them, itself left out). */
  given: Record<string, unknown>;
}

export async function batchCall(args: BatchArgs, ctx: ToolContext, engine: Engine): Promise<ToolOutcome> {
  const waitSeconds = args.wait ?? engine.config.defaultWaitSeconds;
  const budget = callBudget(args.wait, engine.config.defaultWaitSeconds);
  let ceiling: Ceiling | undefined;
  try {
    // 1. Check every item; one answer names every error of every item.
    const items = await checkItems(engine, args.items);
    // 2. One estimate and one approval for the whole; the threshold applies to the total.
    const known = items.map((it) => it.estimate).filter((e): e is number => e !== undefined);
    const q = new Questions(ctx, { engine, tool: "generate_batch", args: args.given });
    // GENERATION_MAX_GEMS caps each request (each item's share is held to it); for the total it
    // is that cap once per item, so the batch's one ceiling is not held to a single item's cap.
    const cap = engine.config.maxGems;
    const whole =
      cap === undefined ? engine : { ...engine, config: { ...engine.config, maxGems: cap * items.length } };
    ceiling = await confirmSpending(whole, ctx, q, {
      tool: "generate_batch",
      model: [...new Set(items.map((it) => it.prepared.body.model))].join(", "),
      given: args.maxGems,
      limit: LIMITS.mediaMaxGems * items.length,
      estimate: async () =>
        known.length === 0
          ? undefined
          : { gems: known.reduce((a, b) => a + b, 0), factors: factorsOf(items) },
      args: args.given,
      approval: args.approval,
    });
    if (q.pending) return await q.result();
    // The batch's ceiling, divided: the shares' sum never exceeds it, none exceeds the cap.
    // No ceiling at all (no maxGems, cap or threshold): each item goes without one.
    const total = ceiling.maxGems;
    const shares = divideCeiling(items, { total, cap, limit: LIMITS.mediaMaxGems });
    const estimated = known.length === items.length ? known.reduce((a, b) => a + b, 0) : undefined;
    const work: BatchWork = {
      tool: "generate_batch",
      bytes: batchBytes(args),
      idempotencyKey: args.idempotencyKey,
      items: items.map((it, i) => {
        const built = buildUnder(it.prepared, shares[i]);
        return {
          tool: it.tool,
          kind: it.kind,
          operation: it.prepared.body.operation,
          built: { body: { model: built.body.model, maxGems: built.body.maxGems }, bytes: built.bytes },
          estimate: it.estimate,
        };
      }),
      facts: { ceiling, total, estimated },
      ...(ctx.takesTasks === true ? { inTask: true } : {}),
    };
    const steps = batchSteps(engine, work);
    // A client that takes MCP tasks gets one task for the whole batch once the batch's claim is
    // durable: sending the items, the wait and the answer go on in its background.
    if (ctx.takesTasks === true) return await handBack(engine, steps, ctx.taskForm, ctx.notifyTaskStatus);
    // 3. Claim the batch, durable before any item is sent.
    const batch = await steps.send(ctx, budget);
    // 4. Send every item under its derived identity, 5. wait once for all and present; 6. deliver.
    return deliver(ctx, batch, await steps.present(batch, { ctx, budget, waitSeconds }));
  } catch (err) {
    return withNext(refused(engine, err, ceiling));
  } finally {
    budget.release();
  }
}

/** The total's factors in words: each item's estimate, or that it has none. */
function factorsOf(items: CheckedItem[]): string[] {
  return items.map((it, i) =>
    it.estimate === undefined
      ? `items[${i}] (${it.prepared.body.model}): no estimate`
      : `items[${i}] (${it.prepared.body.model}): about ${gems(it.estimate)}`,
  );
}

/** What names the batch in the ledger: its items and its own maxGems, canonical (not wait, not approval). */
function batchBytes(args: BatchArgs): string {
  const items = args.items.map((it) => ({ tool: it.tool, arguments: "args" in it ? it.args : {} }));
  return canonicalJson({ items, ...(args.maxGems === undefined ? {} : { maxGems: args.maxGems }) });
}

/** A quote carries its next step in structuredContent too, as every batch answer does. */
function withNext(result: ToolOutcome): ToolOutcome {
  const structured = (result as { structuredContent?: Record<string, unknown> }).structuredContent;
  const approval = structured?.approval as { next?: unknown } | undefined;
  if (structured === undefined || typeof approval?.next !== "string") return result;
  return { ...result, structuredContent: { ...structured, next: approval.next } } as ToolOutcome;
}
