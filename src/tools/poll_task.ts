import { z } from "zod";
import { presentTask } from "../calls/paid/present.js";
import { waitWithProgress } from "../calls/paid/waiting.js";
import { isTerminal, LIMITS } from "../config/service-limits.js";
import { DEFAULT_WAIT_CAP_SECONDS } from "../config/time-limits.js";
import type { LedgerRecord } from "../ledger/listing.js";
import { boundedWait, callBudget } from "../mcp/budget.js";
import type { Engine } from "../mcp/context.js";
import { defineTool } from "../mcp/define-tool.js";
import { MAX_WAIT_SECONDS, nextOut, TaskOut, taskIdField } from "../mcp/fields.js";
import { shownState } from "../mcp/request-view.js";
import { describeError, taskResult, WithNextStep } from "../mcp/results.js";
import { VIEWER_LINK } from "../mcp/viewer-link.js";

export default defineTool({
  name: "poll_task",
  title: "Check a generation task",
  description:
    "Reads a task, with fresh signed output URLs; with `wait`, polls until it finishes. Free; never submits work.",
  inputSchema: z.strictObject({
    taskId: taskIdField,
    wait: z
      .number()
      .min(0)
      .max(MAX_WAIT_SECONDS)
      .optional()
      .describe(`Seconds to poll, at most ${DEFAULT_WAIT_CAP_SECONDS}; default 0 (read once).`),
  }),
  outputSchema: z.object({
    task: TaskOut,
    // True once finished (not queued or processing): its name says it, in a listing held to 20,000 bytes.
    terminal: z.boolean(),
    next: nextOut,
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  meta: VIEWER_LINK,
  async handler(args, ctx, engine) {
    const { wait = 0, note: waitNote } = boundedWait(args.wait);
    const budget = callBudget(wait, 0);
    const first = await engine.client
      .getTask(args.taskId, { signal: budget.signal(ctx.signal, 1_000, "read") })
      .catch(async (err: unknown) => {
        throw await identityGiven(engine, args.taskId, err);
      })
      .finally(() => budget.release());
    const { task, note } = await waitWithProgress(engine, ctx, first, wait, budget);
    const notes = [waitNote, note].filter((n): n is string => n !== undefined);
    const shown = await presentTask(engine, ctx, task, { notes, budget });
    const structured = { task, terminal: isTerminal(task.status), next: shown.next };
    return taskResult(shown.text, structured, shown.content);
  },
});

/**
 * A request identity (`gm-…`, or an idempotencyKey the caller chose) passed where the task ID
 * belongs reads as NOT_FOUND from the service: say what it is, and where its task ID is.
 */
async function identityGiven(engine: Engine, id: string, err: unknown): Promise<unknown> {
  if (describeError(err).code !== "NOT_FOUND" || !LIMITS.idempotencyKeyPattern.test(id)) return err;
  const [rec] = await engine.ledger
    .list(engine.keyHash, { idempotencyKey: id, limit: 1 })
    .catch(() => [] as LedgerRecord[]);
  if (rec?.taskId !== undefined) {
    return new WithNextStep(
      err,
      `"${id}" is the identity (idempotencyKey) of a request to ${rec.tool}, not a task ID; its task is ${rec.taskId}: call poll_task with {"taskId": "${rec.taskId}"}.`,
    );
  }
  if (rec !== undefined) {
    return new WithNextStep(
      err,
      `"${id}" is the identity (idempotencyKey) of a request to ${rec.tool}, not a task ID, and that request has no task yet (state ${shownState(rec.state)}): call list_requests with {"idempotencyKey": "${id}"} to see where it stands.`,
    );
  }
  if (!id.startsWith("gm-")) return err;
  return new WithNextStep(
    err,
    `"${id}" looks like a request identity (idempotencyKey), not a task ID: call list_requests with {"idempotencyKey": "${id}"} for its task ID, then poll_task with that.`,
  );
}
