/**
 * The steps every paid call takes, in order, each named once here; one function per call kind
 * reads as these steps (media-call.ts, chat-call.ts, extract-call.ts):
 *
 *   1. checkArguments   refuse bad input before anything leaves (no record): what the catalog rules
 *                       out, then the body's own fields, prepared without its ceiling
 *   2. confirmSpending  the ceiling to send, asking the user only when an estimate exceeds the
 *                       threshold (spending.ts)
 *   3. claimAndSend     the body built once under that ceiling (buildUnder, src/client/requests.ts);
 *                       the ledger records the identity and bytes durably, then sends them within
 *                       the call's budget, replaying an uncertain outcome under the same identity
 *   4. (media) wait for the task within the budget (waiting.ts), then present it (present.ts)
 *   5. deliver          the result goes back to the transport, and the record is marked delivered
 *                       once the transport wrote it to a live client (docs/idempotency.md#delivery)
 *
 * For a client that takes MCP tasks, the call kind's one visible branch hands a task back as soon
 * as the claim is durable (handBack, src/calls/mcp-task/mcp-task-background.ts), and steps 3 (the
 * sending) to 5 go on in the task's background; the result is delivered when `tasks/get` carries it.
 *
 * After step 3 every answer carries the identity; a failure before it sends nothing and records
 * nothing.
 */
import type { Prepared } from "../../client/requests.js";
import type { RunResult } from "../../ledger/open-ledger.js";
import type { Budget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import type { ToolOutcome } from "../../mcp/define-tool.js";
import { stepByKey } from "../../mcp/next-steps.js";
import { describeError, errorResult, keyRefused } from "../../mcp/results.js";
import type { Steps } from "../mcp-task/mcp-task-background.js";
import { chargedText } from "./charged.js";
import { QuoteNeeded, quoteResult } from "./quote.js";
import { type Ceiling, ceilingNote, priceRefusal } from "./spending.js";
import { JOINED, REPLAYED } from "./task-view.js";

/** A body as it will be sent: its bytes are what the ledger stores and every attempt sends. */
export interface Built {
  body: { model: string; maxGems?: number | undefined };
  bytes: string;
}

/**
 * Step 1: refuses what the model catalog rules out (`catalog`, where the kind has such a check:
 * src/calls/catalog/catalog-check.ts), then what the body's own fields would make unsendable (`prepare`:
 * src/client/requests.ts; the arguments' own bounds were checked at the edge,
 * src/mcp/define-tool.ts). Before any question, claim or request, so a refusal leaves no record
 * and spends nothing. The body is built once its ceiling is confirmed, in step 3.
 */
export async function checkArguments<B extends Built["body"]>(
  prepare: () => Prepared<B>,
  catalog?: () => Promise<void>,
): Promise<Prepared<B>> {
  await catalog?.();
  return prepare();
}

export interface Send<T> {
  tool: string;
  /** The service path, recorded with the identity. */
  endpoint: string;
  /** The exact body to record and send. */
  built: Built;
  idempotencyKey: string | undefined;
  budget: Budget;
  /** One attempt's limit before it counts as uncertain and is replayed (media: SUBMIT_ATTEMPT_MS). */
  attemptMs?: number;
  /** Sends the bytes under the identity, and nothing else: a method of the service client. */
  send(identity: string, bytes: string, signal: AbortSignal | undefined): Promise<T>;
  /** What the record keeps of a success: the task ID (media) or response ID (text, extraction). */
  ref(result: T): { taskId?: string; responseId?: string };
  /** Told the identity once the claim is durable (a task is handed back from there). */
  onClaimed?: (identity: string) => void;
}

/**
 * Step 3: the ledger claims the identity (stored with the bytes before the first byte is sent),
 * sends within the budget and replays uncertain outcomes. Throws IdentifiedError once claimed.
 * Under a key the service has already refused, nothing is claimed or sent.
 */
export async function claimAndSend<T>(engine: Engine, ctx: ToolContext, o: Send<T>): Promise<RunResult<T>> {
  if (engine.key.refused) throw keyRefused(engine.key.origin);
  return engine.ledger.run(
    {
      keyHash: engine.keyHash,
      tool: o.tool,
      endpoint: o.endpoint,
      bytes: o.built.bytes,
      signal: o.budget.signal(ctx.signal),
      maxElapsedMs: o.budget.remainingMs(),
      ...(o.attemptMs === undefined ? {} : { attemptMs: o.attemptMs }),
      onAttempt: replayProgress(ctx),
      // The service may echo the key in an error; the ledger stores summaries without it.
      scrub: engine.client.scrub,
      // Kept on the record: polling learns how long each model's tasks take.
      model: o.built.body.model,
      ...(o.idempotencyKey === undefined ? {} : { idempotencyKey: o.idempotencyKey }),
      ...(o.onClaimed === undefined ? {} : { onClaimed: o.onClaimed }),
    },
    o.send,
    o.ref,
  );
}

/**
 * Step 3 as a step of its own, for `Steps.send`: claims and sends `o` within whichever context and
 * budget it runs in (this call's, or a task's); `identity` goes on with a request already claimed.
 */
export function sending<T>(engine: Engine, o: Omit<Send<T>, "budget">): Steps<T>["send"] {
  return (ctx, budget, extra = {}) =>
    claimAndSend(engine, ctx, {
      ...o,
      budget,
      ...(extra.identity === undefined ? {} : { idempotencyKey: extra.identity }),
      ...(extra.onClaimed === undefined ? {} : { onClaimed: extra.onClaimed }),
    });
}

/**
 * Step 5: hands the result over. Until the transport says whether it reached the client, an
 * identical call and list_requests wait for the mark; written, the record is marked delivered
 * (a repeat is then new work); lost or cancelled, it stays replayable.
 */
export function deliver<R extends ToolOutcome>(ctx: ToolContext, run: RunResult<unknown>, result: R): R {
  const mark = run.handOver();
  ctx.onDelivery((delivered) => mark.settle(delivered));
  return result;
}

/**
 * A refusal of a paid call as its result, built once (or, for a price that needs the user's
 * approval and could not be asked about, the quote): PRICE_CHANGED under a ceiling of ours (the
 * amount the user accepted, or the confirmation threshold) says what it was, that nothing was
 * charged, and how to go above it; `next` replaces the generic next step where the call knows better.
 */
export function refused(
  engine: Engine,
  err: unknown,
  ceiling: Ceiling | undefined,
  next?: (code: string) => string | undefined,
): ToolOutcome {
  // Not a refusal: the price needs the user's approval, and the answer is the quote (quote.ts).
  if (err instanceof QuoteNeeded) return quoteResult(err.facts);
  const { code } = describeError(err);
  const price = ceiling !== undefined && code === "PRICE_CHANGED" ? priceRefusal(engine, ceiling) : undefined;
  const instead = price?.next ?? next?.(code) ?? stepByKey(engine.key.origin)(code);
  return errorResult(err, {
    notes: price?.note ? [price.note] : [],
    ...(instead === undefined ? {} : { next: instead }),
  });
}

/**
 * What a text or extraction answer says about money, in this order: a reused identity (no new
 * charge), the Gems charged (charged.ts), a ceiling of ours, and (`varied`: what the tool's
 * calls would vary) how identical calls made at once get several results.
 */
export function spendingNotes(
  engine: Engine,
  run: RunResult<unknown>,
  ceiling: Ceiling,
  varied: string,
): string[] {
  return [
    reuseNote(run),
    chargedText(run.result, ceiling.maxGems, run.reused),
    ceilingNote(engine, ceiling),
    variationsNote(run, { varied }),
  ].filter((l): l is string => l !== undefined);
}

/**
 * Identical calls made at once rightly share one request: one task, one charge. The answer of the
 * first call that joined says, once, how to get several different results instead (`varied`: what
 * to vary in this tool; `outputs`: the tool takes parameters.outputCount).
 */
export function variationsNote(
  run: RunResult<unknown>,
  o: { varied: string; outputs?: boolean },
): string | undefined {
  if (run.joinOrder !== 1) return undefined;
  const ways = [
    ...(o.outputs ? ["set parameters.outputCount (up to the model's maxOutputs) in one call"] : []),
    `vary the ${o.varied} of each call`,
    "give each call its own idempotencyKey",
  ];
  return `Identical calls made at once share one request and one result. For several different results: ${ways.join(", or ")}.`;
}

/** How a reused identity reads: joined a call in flight, or replayed an earlier one; no new charge. */
function reuseNote(run: RunResult<unknown>): string | undefined {
  if (!run.reused) return undefined;
  return run.joined ? JOINED : REPLAYED;
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
