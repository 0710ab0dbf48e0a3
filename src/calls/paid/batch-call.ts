/**
 * generate_batch: several media submissions under one estimate, one approval and one total
 * ceiling, read top to bottom as the steps of paid-call.ts:
 *
 *   1. check     every item by its own tool's schema (the tool file, src/tools/generate_batch.ts)
 *                and the catalog (catalog-check.ts), every item's errors in one INVALID_ARGUMENT
 *   2. confirm   spending once, for the sum of the items' estimates, with tool "generate_batch"
 *                (spending.ts): the threshold applies to the total; the ceiling it gives is the
 *                batch's, divided into per-item maxGems (batch-share.ts)
 *   3. claim     the batch itself (its identity, durable with the batch's canonical bytes), then
 *                each item under `<batch identity>.<index>` before its own send: a replayed batch
 *                replays every item's identity and the service dispatches nothing again
 *   4. send      the items at once (at most 10), each through the ledger as a single call is
 *   5. wait      one shared wait within the call's budget, then present (batch-view.ts)
 *   6. deliver   the batch's and every item's record marked once the transport wrote the answer
 *
 * The ledger's rules (docs/idempotency.md) hold for the batch record and per item: an identical
 * batch whose answer was not delivered (or the same idempotencyKey) reuses the batch identity,
 * and so every item's; once delivered, identical arguments are new work.
 */
import { createHash } from "node:crypto";
import { buildUnder, canonicalJson } from "../../client/requests.js";
import { LIMITS } from "../../config/service-limits.js";
import type { RunResult } from "../../ledger/open-ledger.js";
import { type Budget, callBudget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import type { ToolOutcome } from "../../mcp/define-tool.js";
import { Questions } from "../../mcp/questions.js";
import { LocalRefusal } from "../../shared/local-refusals.js";
import { gems } from "../../shared/wording.js";
import { type CheckedItem, checkItems, type ItemInput } from "./batch-check.js";
import { divideCeiling } from "./batch-share.js";
import { type ItemOutcome, type ItemRun, presentBatch } from "./batch-view.js";
import { mediaSteps } from "./media-call.js";
import { deliver, refused } from "./paid-call.js";
import { type Ceiling, confirmSpending } from "./spending.js";
import { waitWithProgress } from "./waiting.js";

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
    const total = ceiling.source === "none" || ceiling.source === "configured" ? undefined : ceiling.maxGems;
    const shares = divideCeiling(items, { total, cap, limit: LIMITS.mediaMaxGems });
    // 3. Claim the batch, durable before any item is sent.
    const batch = await claimBatch(engine, ctx, budget, batchBytes(args), args.idempotencyKey);
    // 4. Send every item at once, each claimed under its derived identity before its send.
    const sent = await Promise.all(
      items.map((it, i) => sendItem(engine, ctx, budget, it, i, itemIdentity(batch.identity, i), shares[i])),
    );
    // 5. One wait for all, then the answer; 6. deliver, every record marked once written.
    const outcomes = await waitAll(engine, ctx, sent, waitSeconds, budget);
    for (const o of outcomes) if ("run" in o) markOnDelivery(ctx, o.run);
    const estimated = known.length === items.length ? known.reduce((a, b) => a + b, 0) : undefined;
    const shown = await presentBatch(engine, ctx, outcomes, {
      identity: batch.identity,
      reused: batch.reused,
      tools: items.map((it) => it.tool),
      ceiling,
      total,
      estimated,
      waitSeconds,
    });
    return deliver(ctx, batch, shown);
  } catch (err) {
    return refused(engine, err, ceiling);
  } finally {
    budget.release();
  }
}

/** An item's record is delivered with the batch's answer, as deliver (paid-call.ts) marks a single call's. */
function markOnDelivery(ctx: ToolContext, run: ItemRun): void {
  const mark = run.handOver();
  ctx.onDelivery((delivered) => mark.settle(delivered));
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

/** An item's identity: `<batch>.<index>`, or a hash of the batch's where that would be too long. */
export function itemIdentity(batch: string, index: number): string {
  const direct = `${batch}.${index}`;
  if (LIMITS.idempotencyKeyPattern.test(direct)) return direct;
  const hash = createHash("sha256").update(batch, "utf8").digest("hex").slice(0, 40);
  return `b-${hash}.${index}`;
}

/**
 * The batch's own record: claimed (durable) with the batch's bytes, and nothing sent under it (its
 * items are sent under their own identities). Its identity is the caller's idempotencyKey, the
 * identity of an identical batch not yet delivered, or a new one.
 */
function claimBatch(
  engine: Engine,
  ctx: ToolContext,
  budget: Budget,
  bytes: string,
  idempotencyKey: string | undefined,
): Promise<RunResult<null>> {
  return engine.ledger.run(
    {
      keyHash: engine.keyHash,
      tool: "generate_batch",
      endpoint: "(batch: its items are sent under their own identities)",
      bytes,
      signal: budget.signal(ctx.signal),
      maxElapsedMs: budget.remainingMs(),
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    },
    async () => null,
    () => ({}),
  );
}

/** Step 4 for one item: built under its share, claimed under its identity, sent; never throws. */
async function sendItem(
  engine: Engine,
  ctx: ToolContext,
  budget: Budget,
  item: CheckedItem,
  index: number,
  identity: string,
  maxGems: number | undefined,
): Promise<ItemOutcome> {
  const base = { index, identity, maxGems };
  if (maxGems !== undefined && maxGems < 1 && (item.estimate ?? 1) > 0) {
    const why = `no Gems of the batch's ceiling were left for this item (its share is ${maxGems}); it was not sent`;
    return {
      ...base,
      error: new LocalRefusal("PRICE_CHANGED", why, "Raise the batch's maxGems, or send fewer items."),
    };
  }
  const { body } = item.prepared;
  const work = {
    tool: item.tool,
    kind: item.kind,
    operation: body.operation,
    built: buildUnder(item.prepared, maxGems),
    idempotencyKey: identity,
    ceiling: { maxGems, source: "given" } as Ceiling,
    dirs: undefined,
  };
  try {
    const run = await mediaSteps(engine, work).send(ctx, budget);
    return { ...base, identity: run.identity, run, task: run.result.submission.task };
  } catch (err) {
    return { ...base, error: err };
  }
}

/** Step 5: one wait shared by every sent item, within the budget; progress says how many are done. */
async function waitAll(
  engine: Engine,
  ctx: ToolContext,
  sent: ItemOutcome[],
  waitSeconds: number,
  budget: Budget,
): Promise<ItemOutcome[]> {
  const tasks = sent.filter((o) => "run" in o).length;
  await ctx.progress(`Sent ${tasks} of ${sent.length} items; waiting up to ${waitSeconds} s`);
  let done = 0;
  // The items' own polls stay quiet: one progress line per finished item says more.
  const quiet: ToolContext = { ...ctx, progress: async () => {} };
  return Promise.all(
    sent.map(async (o) => {
      if (!("run" in o)) return o;
      const waited = await waitWithProgress(engine, quiet, o.task, waitSeconds, budget);
      if (waited.task.status !== o.task.status) {
        done++;
        await ctx.progress(`items[${o.index}] ${waited.task.status} (${done} of ${tasks} changed)`);
      }
      return { ...o, task: waited.task };
    }),
  );
}
