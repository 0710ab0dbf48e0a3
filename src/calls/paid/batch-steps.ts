/**
 * What follows a batch's claim (generate_batch, batch-call.ts) as the Steps an MCP task runs too
 * (src/calls/mcp-task/mcp-task-background.ts): `send` claims the batch's own record (its identity,
 * durable with the batch's bytes; nothing goes to the service under it), and `present` sends every
 * item under `<batch identity>.<index>` through the ledger as a single call is sent, waits once for
 * all within the budget and answers (batch-view.ts). Rebuilt from `work` alone after a restart
 * (resumable.ts): the batch's identity replays, so does every item's, and the service dispatches
 * nothing again.
 */
import { createHash } from "node:crypto";
import { LIMITS, type MediaKind } from "../../config/service-limits.js";
import type { RunResult } from "../../ledger/open-ledger.js";
import type { Budget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import { LocalRefusal } from "../../shared/local-refusals.js";
import type { Steps } from "../mcp-task/mcp-task-background.js";
import type { BatchTool } from "./batch-check.js";
import { type ItemOutcome, type ItemRun, presentBatch } from "./batch-view.js";
import { mediaSteps } from "./media-call.js";
import { type Built, refused } from "./paid-call.js";
import type { Ceiling } from "./spending.js";
import { waitWithProgress } from "./waiting.js";

/** One item as a task keeps it: its body's bytes, built under its share of the ceiling. */
export interface BatchItemWork {
  tool: BatchTool;
  kind: MediaKind;
  operation: string | undefined;
  built: Built;
  estimate: number | undefined;
}

/** A batch as a task keeps it (JSON, never the key): enough to rebuild its steps anywhere. */
export interface BatchWork {
  tool: "generate_batch";
  /** The batch's canonical bytes, its ledger record's body. */
  bytes: string;
  idempotencyKey: string | undefined;
  items: BatchItemWork[];
  facts: { ceiling: Ceiling; total: number | undefined; estimated: number | undefined };
  /**
   * Runs as an MCP task, whose result tasks/get delivers under the batch's identity only: each
   * item's record is marked delivered with the answer's making instead. A replay goes through the
   * batch's record (undelivered until read), whose items' explicit identities replay whatever
   * their marks, so the marks only keep the items off the open list.
   */
  inTask?: boolean;
}

export function batchSteps(engine: Engine, work: BatchWork): Steps<null> {
  return {
    work: work as unknown as Record<string, unknown>,
    send: (ctx, budget, extra = {}) =>
      claimBatch(engine, ctx, budget, work, extra.identity ?? work.idempotencyKey, extra.onClaimed),
    facts: () => ({}),
    present: async (batch, within) => {
      const { ctx, budget, waitSeconds } = within;
      const sent = await Promise.all(
        work.items.map((it, i) => sendItem(engine, ctx, budget, it, i, itemIdentity(batch.identity, i))),
      );
      const outcomes = await waitAll(engine, ctx, sent, waitSeconds, budget);
      // Each item's record is delivered with the batch's answer.
      for (const o of outcomes) {
        if (!("run" in o)) continue;
        if (work.inTask === true) void o.run.handOver().settle(true);
        else markOnDelivery(ctx, o.run);
      }
      return presentBatch(engine, outcomes, {
        identity: batch.identity,
        reused: batch.reused,
        tools: work.items.map((it) => it.tool),
        waitSeconds,
        ...work.facts,
      });
    },
    refuse: (err) => refused(engine, err, work.facts.ceiling),
  };
}

/** An item's record is delivered with the batch's answer, as deliver (paid-call.ts) marks a single call's. */
function markOnDelivery(ctx: ToolContext, run: ItemRun): void {
  const mark = run.handOver();
  ctx.onDelivery((delivered) => mark.settle(delivered));
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
  work: BatchWork,
  idempotencyKey: string | undefined,
  onClaimed: ((identity: string) => void) | undefined,
): Promise<RunResult<null>> {
  return engine.ledger.run(
    {
      keyHash: engine.keyHash,
      tool: "generate_batch",
      endpoint: "(batch: its items are sent under their own identities)",
      bytes: work.bytes,
      signal: budget.signal(ctx.signal),
      maxElapsedMs: budget.remainingMs(),
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      ...(onClaimed === undefined ? {} : { onClaimed }),
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
  item: BatchItemWork,
  index: number,
  identity: string,
): Promise<ItemOutcome> {
  const { maxGems } = item.built.body;
  const base = { index, identity, maxGems };
  if (maxGems !== undefined && maxGems < 1 && (item.estimate ?? 1) > 0) {
    const why = `no Gems of the batch's ceiling were left for this item (its share is ${maxGems}); it was not sent`;
    return {
      ...base,
      error: new LocalRefusal("PRICE_CHANGED", why, "Raise the batch's maxGems, or send fewer items."),
    };
  }
  const ceiling: Ceiling = { maxGems, source: "given" };
  const media = { ...item, idempotencyKey: identity, ceiling, dirs: undefined };
  try {
    const run = await mediaSteps(engine, media).send(ctx, budget);
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
