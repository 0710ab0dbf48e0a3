/**
 * The flow every spending tool shares: validate, ask what must be asked, submit through
 * the ledger (identity and bytes stored before sending), wait a bounded time with
 * progress, present the task, and only then mark the result delivered. A call cancelled
 * before delivery stays undelivered, so an identical call replays the same identity.
 */
import type { ContentBlock } from "@modelcontextprotocol/server";
import { isTerminal, LIMITS, type MediaKind } from "../service/limits.js";
import type { Model, Task } from "../service/schemas.js";
import { Questions } from "./ask.js";
import type { Engine, ToolContext } from "./context.js";
import { allowedDirs } from "./files.js";
import { declined, describeError, okResult } from "./results.js";
import { imagePreviews, resourceLinks, saveOutputs, taskText } from "./taskview.js";
import type { ToolOutcome } from "./tool.js";

// ---------- spending ----------

const catalogs = new WeakMap<Engine, { at: number; models: Model[] }>();
async function catalog(engine: Engine, signal: AbortSignal): Promise<Model[]> {
  const hit = catalogs.get(engine);
  if (hit && Date.now() - hit.at < 60_000) return hit.models;
  const { models } = await engine.client.listModels({ signal });
  catalogs.set(engine, { at: Date.now(), models });
  return models;
}

/** baseGems × outputCount for image models; undefined where the catalog has no hint. */
export async function estimateGems(
  engine: Engine,
  model: string,
  parameters: Record<string, unknown>,
  signal: AbortSignal,
): Promise<number | undefined> {
  try {
    const entry = (await catalog(engine, signal)).find((m) => m.id === model);
    if (entry?.baseGems === undefined) return undefined;
    const count = typeof parameters.outputCount === "number" ? parameters.outputCount : 1;
    return entry.baseGems * count;
  } catch {
    return undefined;
  }
}

/**
 * Asks the user before spending above GENERATION_CONFIRM_ABOVE_GEMS, when the client can
 * ask. The service has no quote endpoint, so the figure shown is an estimate; a maxGems
 * ceiling at or under the threshold makes the question unnecessary. When the question is
 * skipped only because the estimate is under the threshold, the threshold is returned as the
 * ceiling to send: an estimate can be low (resolution, duration), and then the service refuses
 * with PRICE_CHANGED instead of spending past what the user set without asking.
 */
export async function confirmSpending(
  engine: Engine,
  ctx: ToolContext,
  q: Questions,
  o: {
    tool: string;
    model: string;
    maxGems: number | undefined;
    estimate?: () => Promise<number | undefined>;
  },
): Promise<number | undefined> {
  const threshold = engine.config.confirmAboveGems;
  if (threshold === undefined || !ctx.canElicit) return undefined;
  if (o.maxGems !== undefined && o.maxGems <= threshold) return undefined;
  const estimate = await o.estimate?.();
  if (estimate !== undefined && estimate <= threshold) return threshold;
  const cost =
    estimate !== undefined
      ? `about ${estimate} Gems (an estimate from the catalog's baseGems; the service sets the real quote when it receives the request)`
      : "an amount the service only quotes on submission (no estimate is available)";
  const ceiling = o.maxGems !== undefined ? ` It will refuse to spend more than ${o.maxGems} Gems.` : "";
  const answer = q.confirm(
    "spend",
    `${o.tool} with model ${o.model} will spend ${cost}, above your confirmation threshold of ${threshold} Gems.${ceiling} Go ahead?`,
  );
  if (answer === "no") throw declined(`to spend Gems on ${o.tool}`);
  return undefined;
}

/** The text-endpoint ceiling is lower than the media one; a default must fit it. */
export const textMaxGems = (engine: Engine, given: number | undefined): number | undefined =>
  given ??
  (engine.config.maxGems === undefined ? undefined : Math.min(engine.config.maxGems, LIMITS.textMaxGems));

/** The ledger's replays of an uncertain outcome, made visible as progress (same identity, same bytes). */
export const replayProgress =
  (ctx: ToolContext) =>
  (attempt: number, err?: unknown): void => {
    if (attempt > 1)
      void ctx.progress(
        `Outcome unclear (${describeError(err).code}); replaying under the same identity, attempt ${attempt}`,
      );
  };

/** Records delivery once the result is built; a cancelled call stays undelivered. */
export async function deliver(
  engine: Engine,
  ctx: ToolContext,
  identity: string,
): Promise<string | undefined> {
  if (ctx.signal.aborted) return undefined;
  try {
    await engine.ledger.markDelivered(engine.keyHash, identity, true);
    return undefined;
  } catch (err) {
    return `Note: the ledger could not record delivery (${describeError(err).code}); an identical call will replay this same request.`;
  }
}

// ---------- presenting a task ----------

export async function presentTask(
  engine: Engine,
  ctx: ToolContext,
  task: Task,
  o: {
    identity?: string;
    reused?: boolean;
    created?: boolean;
    dirs?: string[] | undefined;
    notes?: string[];
  },
): Promise<{ text: string; content: ContentBlock[]; saved?: string[] }> {
  const notes = [...(o.notes ?? [])];
  const { blocks, notes: previewNotes } = await imagePreviews(engine, task, ctx.signal);
  notes.push(...previewNotes);
  let saved: string[] | undefined;
  if (o.dirs && isTerminal(task.status)) {
    const result = await saveOutputs(engine, task.id, o.dirs, ctx.signal);
    saved = result.saved;
    notes.push(...result.notes);
  } else if (o.dirs) {
    notes.push(
      "Not saved yet: the task is not finished; call save_outputs with the task ID once poll_task says it is.",
    );
  }
  const text = taskText(task, { ...o, wait: engine.config.defaultWaitSeconds, notes });
  return { text, content: [...resourceLinks(task), ...blocks], ...(saved ? { saved } : {}) };
}

/** Waits for a task within `wait` seconds, reporting progress at each poll. Never throws. */
export async function waitWithProgress(
  engine: Engine,
  ctx: ToolContext,
  task: Task,
  wait: number,
): Promise<{ task: Task; note?: string }> {
  if (isTerminal(task.status) || wait <= 0) return { task };
  try {
    // Request building and polling load on first use: a first tools/list needs neither.
    const { waitLearning } = await import("./schedule.js");
    const result = await waitLearning(engine, ctx, task, wait);
    return { task: result.task };
  } catch (err) {
    // The task exists and is paid for: a failed poll must not lose its ID.
    return { task, note: `Polling stopped early (${describeError(err).code}); the task was submitted.` };
  }
}

/** Resolves the directories a save may write into (asks for roots when the client has them). */
export function saveDirs(
  engine: Engine,
  q: Questions,
  save: boolean | undefined,
): (() => Promise<string[]>) | undefined {
  if (!save) return undefined;
  const roots = q.roots();
  return async () => allowedDirs(engine.config.files, roots === "pending" ? [] : roots);
}

// ---------- media submissions ----------

export interface MediaArgs {
  model: string;
  prompt: string;
  parameters?: Record<string, unknown> | undefined;
  referenceAssetIds?: string[] | undefined;
  maxGems?: number | undefined;
  operation?: string | undefined;
  idempotencyKey?: string | undefined;
  wait?: number | undefined;
  save?: boolean | undefined;
}

export async function submitMedia(
  tool: string,
  kind: MediaKind,
  args: MediaArgs,
  ctx: ToolContext,
  engine: Engine,
): Promise<ToolOutcome> {
  const { wait, idempotencyKey, save, ...request } = args;
  const maxGems = request.maxGems ?? engine.config.maxGems;
  const { buildMediaBody } = await import("../service/requests.js");
  const built = buildMediaBody(kind, { ...request, ...(maxGems === undefined ? {} : { maxGems }) });
  const q = new Questions(ctx);
  const dirs = saveDirs(engine, q, save);
  const ceiling = await confirmSpending(engine, ctx, q, {
    tool,
    model: built.body.model,
    maxGems: built.body.maxGems,
    estimate: () => estimateGems(engine, built.body.model, built.body.parameters, ctx.signal),
  });
  if (q.pending) return q.result();
  const { bytes } = ceiling === undefined ? built : buildMediaBody(kind, { ...request, maxGems: ceiling });

  const run = await engine.ledger.run(
    {
      keyHash: engine.keyHash,
      tool,
      endpoint: `/api/generate/${kind}`,
      bytes,
      signal: ctx.signal,
      onAttempt: replayProgress(ctx),
      model: built.body.model,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    },
    (identity, sent, signal) => engine.client.submitMedia(kind, sent, identity, signal ? { signal } : {}),
    (r) => ({ taskId: r.submission.task.id }),
  );
  const { submission } = run.result;
  const waitSeconds = wait ?? engine.config.defaultWaitSeconds;
  // The first progress names the task, so a host that cuts the call still showed its ID.
  await ctx.progress(
    `Submitted task ${submission.task.id} (identity ${run.identity}); ${submission.task.status}, waiting up to ${waitSeconds} s`,
  );
  const waited = await waitWithProgress(engine, ctx, submission.task, waitSeconds);
  const shown = await presentTask(engine, ctx, waited.task, {
    identity: run.identity,
    reused: run.reused,
    created: submission.created,
    dirs: dirs ? await dirs() : undefined,
    notes: waited.note ? [waited.note] : [],
  });
  const structured = {
    idempotencyKey: run.identity,
    created: submission.created,
    task: waited.task,
    ...(shown.saved ? { saved: shown.saved } : {}),
  };
  const note = await deliver(engine, ctx, run.identity);
  return okResult(note ? `${shown.text}\n${note}` : shown.text, structured, shown.content);
}
