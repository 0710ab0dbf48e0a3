/**
 * One paid media call (generate_image, generate_video, generate_audio), read top to bottom: the
 * steps of paid-call.ts, then a bounded wait (waiting.ts) and the task as it stands (present.ts).
 * Once the task exists it is paid for: from then on every answer carries its ID and identity,
 * whatever else fails. For a client that takes MCP tasks, what follows the claim (`mediaSteps`)
 * runs in a task's background instead, waiting until the service's task ends.
 */
import { endpointOf } from "../../client/endpoints.js";
import { buildUnder, type MediaBodyInput, prepareMediaBody } from "../../client/requests.js";
import type { Submission } from "../../client/schemas.js";
import type { MediaKind } from "../../config/service-limits.js";
import { LIMITS } from "../../config/service-limits.js";
import { SUBMIT_ATTEMPT_MS } from "../../config/time-limits.js";
import type { RunResult } from "../../ledger/open-ledger.js";
import { callBudget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import type { ToolOutcome } from "../../mcp/define-tool.js";
import { Questions } from "../../mcp/questions.js";
import { describeError, okResult } from "../../mcp/results.js";
import { catalogCheck } from "../catalog/catalog-check.js";
import { refuseWithoutFiles, rootsFor } from "../files/file-areas.js";
import { handBack, type Steps } from "../mcp-task/mcp-task-background.js";
import { type Built, checkArguments, deliver, refused, sending, variationsNote } from "./paid-call.js";
import { presentTask } from "./present.js";
import { type SaveTarget, saveTarget } from "./saving.js";
import { type Ceiling, ceilingNote, confirmSpending, estimateGems } from "./spending.js";
import { taskText } from "./task-view.js";
import { waitWithProgress } from "./waiting.js";

/** A media tool's arguments: the service request's fields (requests.ts), plus the tool's own. */
export interface MediaArgs extends MediaBodyInput {
  idempotencyKey?: string | undefined;
  wait?: number | undefined;
  save?: boolean | undefined;
  /** A quote's approval token for exactly these arguments (approval.ts). */
  approval?: string | undefined;
}

type Run = RunResult<{ httpStatus: number; submission: Submission }>;

export async function submitMedia(
  tool: string,
  kind: MediaKind,
  args: MediaArgs,
  ctx: ToolContext,
  engine: Engine,
): Promise<ToolOutcome> {
  const { wait, idempotencyKey, save, maxGems, approval, ...request } = args;
  const waitSeconds = wait ?? engine.config.defaultWaitSeconds;
  const budget = callBudget(wait, engine.config.defaultWaitSeconds);
  let ceiling: Ceiling | undefined;
  try {
    // 1. Check the arguments: what the model catalog rules out, then the body's own fields.
    const checked = await checkArguments(
      () => prepareMediaBody(kind, request),
      () => catalogCheck(engine, tool, kind, { ...request, idempotencyKey }),
    );
    // 2. Estimate and confirm spending (and ask for roots in the same round, for a save); an
    // answer counts only for these exact arguments and the amount asked about.
    const q = new Questions(ctx, { engine, tool, args });
    if (save) refuseWithoutFiles(engine, "save");
    const roots = save ? rootsFor(engine, q) : undefined;
    ceiling = await confirmSpending(engine, ctx, q, {
      tool,
      model: checked.body.model,
      given: maxGems,
      limit: LIMITS.mediaMaxGems,
      estimate: () => estimateGems(engine, checked.body.model, request.parameters ?? {}),
      args: { ...args },
      approval,
    });
    if (q.pending) return await q.result();
    // A save that cannot work is refused before the charge, never after it.
    const dirs = save ? await saveTarget(engine, roots === "pending" ? [] : roots) : undefined;
    // 3. Build the body once under the confirmed ceiling.
    const built = buildUnder(checked, ceiling.maxGems);
    const work = { tool, kind, operation: request.operation, built, idempotencyKey, ceiling, dirs };
    const steps = mediaSteps(engine, work);
    // A client that takes MCP tasks gets one as soon as the claim is durable: steps 3 to 5 then run
    // in the task's background, and tasks/get carries the result.
    if (ctx.takesTasks === true) return await handBack(engine, steps, ctx.taskForm, ctx.notifyTaskStatus);
    // 3. Claim the identity with the bytes, then send them within the budget.
    const run = await steps.send(ctx, budget);
    // 4. Wait for the task and present it as it stands; 5. deliver, marked once the transport wrote it.
    return deliver(ctx, run, await steps.present(run, { ctx, budget, waitSeconds }));
  } catch (err) {
    return refused(engine, err, ceiling, (code) => nextForVoiceClone(kind, request.operation, code));
  } finally {
    budget.release();
  }
}

/** A media call's request as a task keeps it (JSON): enough to rebuild its steps anywhere. */
export interface MediaWork {
  tool: string;
  kind: MediaKind;
  operation: string | undefined;
  built: Built;
  idempotencyKey: string | undefined;
  ceiling: Ceiling;
  dirs: SaveTarget | undefined;
}

/** What follows the claim of a media call: send, wait for the task and present it (or refuse). */
export function mediaSteps(engine: Engine, work: MediaWork): Steps<Run["result"]> {
  const { kind } = work;
  return {
    // Only what the body needs of `built` (its bytes are the body).
    work: {
      ...work,
      built: {
        body: { model: work.built.body.model, maxGems: work.built.body.maxGems },
        bytes: work.built.bytes,
      },
    },
    send: sending(engine, {
      tool: work.tool,
      endpoint: endpointOf(kind),
      built: work.built,
      idempotencyKey: work.idempotencyKey,
      attemptMs: SUBMIT_ATTEMPT_MS,
      send: (identity, bytes, signal) =>
        engine.client.submitMedia(kind, bytes, identity, signal ? { signal } : {}),
      ref: (r) => ({ taskId: r.submission.task.id, taskStatus: r.submission.task.status }),
    }),
    facts: (r) => ({ taskId: r.submission.task.id, created: r.submission.created }),
    known: async (taskId, sent, signal) => {
      const task = await engine.client.getTask(taskId, { signal });
      return { httpStatus: 200, submission: { created: sent?.created ?? false, task } };
    },
    present: (run, within) =>
      waitAndPresent(engine, within.ctx, run, {
        tool: work.tool,
        waitSeconds: within.waitSeconds,
        budget: within.budget,
        dirs: work.dirs,
        ceiling: work.ceiling,
      }),
    refuse: (err) =>
      refused(engine, err, work.ceiling, (code) => nextForVoiceClone(kind, work.operation, code)),
  };
}

interface Presenting {
  tool: string;
  waitSeconds: number;
  budget: ReturnType<typeof callBudget>;
  dirs: SaveTarget | undefined;
  ceiling: Ceiling;
}

/** The submitted task after a bounded wait, as a result; never throws (the task is paid for). */
async function waitAndPresent(
  engine: Engine,
  ctx: ToolContext,
  run: Run,
  o: Presenting,
): Promise<ToolOutcome> {
  const { submission } = run.result;
  // A call that joined or replayed an earlier one created nothing, whatever the service said then.
  const created = submission.created && !run.reused;
  const notes = [
    ceilingNote(engine, o.ceiling),
    variationsNote(run, { varied: "prompt", outputs: o.tool === "generate_image" }),
  ].filter((n): n is string => n !== undefined);
  const facts = { identity: run.identity, reused: run.reused, joined: run.joined, created };
  // The first progress names the task, so a host that cuts the call still showed its ID.
  await ctx.progress(
    `Submitted task ${submission.task.id} (identity ${run.identity}); ${submission.task.status}, waiting up to ${o.waitSeconds} s`,
  );
  try {
    const waited = await waitWithProgress(engine, ctx, submission.task, o.waitSeconds, o.budget);
    const shown = await presentTask(engine, ctx, waited.task, {
      ...facts,
      dirs: o.dirs,
      notes: [...notes, ...(waited.note ? [waited.note] : [])],
      budget: o.budget,
    });
    const structured = {
      idempotencyKey: run.identity,
      created,
      task: waited.task,
      ...(shown.saved ? { saved: shown.saved } : {}),
    };
    return okResult(shown.text, structured, shown.content);
  } catch (err) {
    const note = `The task was submitted and is paid for, but reading it afterwards failed (${describeError(err).code}); call poll_task with the task ID.`;
    const wait = engine.config.defaultWaitSeconds;
    const text = taskText(submission.task, { ...facts, wait, notes: [...notes, note] });
    return okResult(text, { idempotencyKey: run.identity, created, task: submission.task });
  }
}

/**
 * voice_clone's INVALID_REFERENCE reads "upload the media first" in the service's words; what is
 * wrong there is the voice: it must be a private one.
 */
function nextForVoiceClone(kind: MediaKind, operation: string | undefined, code: string): string | undefined {
  if (kind !== "audio" || operation !== "voice_clone" || code !== "INVALID_REFERENCE") return undefined;
  return "voice_clone needs a private voice of this key: upload a recording with upload_voice and pass its voice ID as parameters.voiceProfileId (public voices from list_voices work with operation speech).";
}
