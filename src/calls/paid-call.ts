/**
 * The one paid-call pipeline every spending tool goes through: build the body with its ceiling,
 * confirm spending, claim through the ledger (identity and bytes stored before the first byte is
 * sent), send within the call's budget, and register "mark delivered" to run once the result has
 * reached the client. A call cancelled before delivery stays undelivered, so an identical call
 * replays the same identity (README, "Idempotency guarantees").
 */
import type { RunResult } from "../ledger/open-ledger.js";
import type { Engine, ToolContext } from "../mcp/context.js";
import type { ToolOutcome } from "../mcp/define-tool.js";
import { Questions } from "../mcp/questions.js";
import { describeError, errorResult } from "../mcp/results.js";
import { attemptSignal, type Budget } from "./budget.js";
import { type Ceiling, confirmSpending, thresholdNote } from "./spending.js";

export interface Built {
  body: { model: string; maxGems?: number | undefined };
  bytes: string;
}

export interface PaidCall<T> {
  tool: string;
  /** The service path, recorded with the identity. */
  endpoint: string;
  /** Builds and checks the body with the ceiling to send; throws ArgumentError for bad input. */
  build(maxGems: number | undefined): Built;
  /** The call's own `maxGems`. */
  maxGems: number | undefined;
  /** The endpoint's highest ceiling. */
  maxGemsLimit: number;
  estimate?: (body: Built["body"]) => Promise<number | undefined>;
  idempotencyKey: string | undefined;
  budget: Budget;
  /**
   * Longest wait for one attempt's answer before it counts as uncertain and is replayed (media
   * submissions answer at once; a streamed answer may rightly take as long as the budget).
   */
  attemptMs?: number;
  /** Questions of the tool's own (roots), asked in the same round as the spending one. */
  questions?: Questions;
  /** Checks made after every answer is in and before anything is sent (a save target). */
  preflight?: () => Promise<void>;
  send(identity: string, bytes: string, signal: AbortSignal | undefined): Promise<T>;
  ref(result: T): { taskId?: string; responseId?: string };
}

export type Paid<T> =
  /** Answered before sending: questions for the client, or a refusal to show as is. */
  { kind: "answered"; result: ToolOutcome } | { kind: "sent"; run: RunResult<T>; ceiling: Ceiling };

export async function paidCall<T>(engine: Engine, ctx: ToolContext, call: PaidCall<T>): Promise<Paid<T>> {
  const first = call.build(call.maxGems);
  const q = call.questions ?? new Questions(ctx);
  const ceiling = await confirmSpending(engine, ctx, q, {
    tool: call.tool,
    model: first.body.model,
    given: call.maxGems,
    limit: call.maxGemsLimit,
    ...(call.estimate ? { estimate: () => call.estimate?.(first.body) ?? Promise.resolve(undefined) } : {}),
  });
  if (q.pending) return { kind: "answered", result: q.result() };
  await call.preflight?.();
  const { bytes } = ceiling.maxGems === first.body.maxGems ? first : call.build(ceiling.maxGems);
  try {
    const run = await engine.ledger.run(
      {
        keyHash: engine.keyHash,
        tool: call.tool,
        endpoint: call.endpoint,
        bytes,
        signal: call.budget.signal(ctx.signal),
        maxElapsedMs: call.budget.remainingMs(),
        onAttempt: replayProgress(ctx),
        // The service may echo the key in an error; the ledger stores summaries without it.
        scrub: engine.client.scrub,
        // Kept on the record: polling learns how long each model's tasks take.
        model: first.body.model,
        ...(call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }),
      },
      call.attemptMs === undefined ? call.send : limitAttempts(call.send, call.attemptMs),
      call.ref,
    );
    markDeliveredLater(engine, ctx, run.identity);
    return { kind: "sent", run, ceiling };
  } catch (err) {
    if (ceiling.fromThreshold && describeError(err).code === "PRICE_CHANGED") {
      return { kind: "answered", result: withNote(errorResult(err), thresholdNote(engine, ceiling.maxGems)) };
    }
    throw err;
  } finally {
    call.budget.release();
  }
}

function limitAttempts<T>(send: PaidCall<T>["send"], ms: number): PaidCall<T>["send"] {
  return async (identity, bytes, signal) => {
    const attempt = attemptSignal(signal ?? new AbortController().signal, ms);
    try {
      return await send(identity, bytes, attempt.signal);
    } finally {
      attempt.release();
    }
  };
}

/** Delivery is marked by the transport once the result reached the client, never before. */
function markDeliveredLater(engine: Engine, ctx: ToolContext, identity: string): void {
  ctx.afterDelivery(async () => {
    try {
      await engine.ledger.markDelivered(engine.keyHash, identity, true);
    } catch {
      // Left undelivered, an identical call replays this identity: the safe side of the failure.
    }
  });
}

/** The ledger's replays of an uncertain outcome, made visible as progress (same identity, same bytes). */
const replayProgress =
  (ctx: ToolContext) =>
  (attempt: number, err?: unknown): void => {
    if (attempt > 1)
      void ctx.progress(
        `Outcome unclear (${describeError(err).code}); replaying under the same identity, attempt ${attempt}`,
      );
  };

/** Appends a line to a result's text. */
function withNote<R extends ToolOutcome>(result: R, note: string): R {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content;
  const first = content?.[0];
  if (first?.type === "text") first.text = `${first.text ?? ""}\n${note}`;
  return result;
}
