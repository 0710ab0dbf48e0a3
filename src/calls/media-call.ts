/**
 * generate_image, generate_video and generate_audio: a paid submission (paid.ts), then a bounded
 * wait (waiting.ts) and the task as it stands (present.ts). Once the task exists it is paid for:
 * from then on every answer carries its ID and identity, whatever else fails.
 */
import { endpointOf } from "../client/endpoints.js";
import type { Submission } from "../client/schemas.js";
import type { MediaKind } from "../config/service-limits.js";
import { LIMITS } from "../config/service-limits.js";
import type { Engine, ToolContext } from "../mcp/context.js";
import type { ToolOutcome } from "../mcp/define-tool.js";
import { Questions } from "../mcp/questions.js";
import { describeError, errorResult, okResult } from "../mcp/results.js";
import { callBudget } from "./budget.js";
import { catalogCheck } from "./catalog-check.js";
import { paidCall } from "./paid-call.js";
import { presentTask } from "./present.js";
import { saveTarget } from "./saving.js";
import { estimateGems } from "./spending.js";
import { taskText } from "./task-view.js";
import { waitWithProgress } from "./waiting.js";

/** A media submission is answered at once (the work is queued); longer is an uncertain attempt. */
const SUBMIT_ATTEMPT_MS = 15_000;

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
  const { wait, idempotencyKey, save, maxGems, ...request } = args;
  const budget = callBudget(wait, engine.config.defaultWaitSeconds);
  const { buildMediaBody } = await import("../client/requests.js");
  const q = new Questions(ctx);
  const roots = save ? q.roots() : undefined;
  let dirs: string[] | undefined;
  let paid: Awaited<ReturnType<typeof paidCall<{ submission: Submission }>>>;
  try {
    // What the model catalog rules out is refused here: nothing confirmed, claimed or spent.
    await catalogCheck(engine, tool, kind, { ...request, idempotencyKey });
    paid = await paidCall(engine, ctx, {
      tool,
      endpoint: endpointOf(kind),
      build: (ceiling) =>
        buildMediaBody(kind, { ...request, ...(ceiling === undefined ? {} : { maxGems: ceiling }) }),
      maxGems,
      maxGemsLimit: LIMITS.mediaMaxGems,
      estimate: (body) => estimateGems(engine, body.model, request.parameters ?? {}),
      idempotencyKey,
      budget,
      attemptMs: SUBMIT_ATTEMPT_MS,
      questions: q,
      ...(save
        ? {
            preflight: async () => {
              dirs = await saveTarget(engine, roots === "pending" ? [] : roots);
            },
          }
        : {}),
      send: (identity, sent, signal) =>
        engine.client.submitMedia(kind, sent, identity, signal ? { signal } : {}),
      ref: (r) => ({ taskId: r.submission.task.id }),
    });
  } catch (err) {
    return refusal(err, kind, request.operation);
  }
  if (paid.kind === "answered") return paid.result;
  const { run } = paid;
  const { submission } = run.result;
  const waitSeconds = wait ?? engine.config.defaultWaitSeconds;
  // The first progress names the task, so a host that cuts the call still showed its ID.
  await ctx.progress(
    `Submitted task ${submission.task.id} (identity ${run.identity}); ${submission.task.status}, waiting up to ${waitSeconds} s`,
  );
  const facts = { identity: run.identity, reused: run.reused, created: submission.created };
  try {
    const waited = await waitWithProgress(engine, ctx, submission.task, waitSeconds, budget);
    const shown = await presentTask(engine, ctx, waited.task, {
      ...facts,
      dirs,
      notes: waited.note ? [waited.note] : [],
      budget,
    });
    const structured = {
      idempotencyKey: run.identity,
      created: submission.created,
      task: waited.task,
      ...(shown.saved ? { saved: shown.saved } : {}),
    };
    return okResult(shown.text, structured, shown.content);
  } catch (err) {
    return submittedAnyway(engine, submission, facts, err);
  }
}

/** After the task exists, a failure of what follows still answers with the task as submitted. */
function submittedAnyway(
  engine: Engine,
  submission: Submission,
  facts: { identity: string; reused: boolean; created: boolean },
  err: unknown,
): ToolOutcome {
  const note = `The task was submitted and is paid for, but reading it afterwards failed (${describeError(err).code}); call poll_task with the task ID.`;
  const text = taskText(submission.task, { ...facts, wait: engine.config.defaultWaitSeconds, notes: [note] });
  return okResult(text, {
    idempotencyKey: facts.identity,
    created: submission.created,
    task: submission.task,
  });
}

/**
 * A refusal before or by the service. voice_clone's INVALID_REFERENCE reads "upload the media
 * first" in the service's words; what is wrong there is the voice: it must be a private one.
 */
function refusal(err: unknown, kind: MediaKind, operation: string | undefined): ToolOutcome {
  const result = errorResult(err);
  if (kind === "audio" && operation === "voice_clone" && describeError(err).code === "INVALID_REFERENCE") {
    const first = result.content[0];
    if (first?.type === "text") {
      first.text = first.text.replace(
        /Next: .*?(?= Identity|$)/s,
        "Next: voice_clone needs a private voice of this key: upload a recording with upload_voice and pass its voice ID as parameters.voiceProfileId (public voices from list_voices work with operation speech).",
      );
    }
  }
  return result;
}
