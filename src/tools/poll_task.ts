import { z } from "zod";
import { callBudget } from "../calls/budget.js";
import { presentTask } from "../calls/present.js";
import { waitWithProgress } from "../calls/waiting.js";
import { isTerminal } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { TaskOut, taskIdField } from "../mcp/fields.js";
import { okResult } from "../mcp/results.js";
import { VIEWER_LINK } from "../mcp/viewer-link.js";

export default defineTool({
  name: "poll_task",
  title: "Check a generation task",
  description:
    "Reads a task: status, Gems and outputs with fresh signed URLs; with `wait`, polls until it finishes or the wait runs out. Free; never submits work.",
  inputSchema: z.strictObject({
    taskId: taskIdField,
    wait: z
      .number()
      .min(0)
      .max(600)
      .optional()
      .describe("Seconds to poll until the task is finished; default 0 (read once)."),
  }),
  outputSchema: z.object({
    task: TaskOut,
    terminal: z.boolean().describe("True once finished: succeeded, partial, failed or cancelled."),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  meta: VIEWER_LINK,
  async handler(args, ctx, engine) {
    const budget = callBudget(args.wait ?? 0, 0);
    const first = await engine.client
      .getTask(args.taskId, { signal: budget.signal(ctx.signal, 1_000, "read") })
      .finally(() => budget.release());
    const { task, note } = await waitWithProgress(engine, ctx, first, args.wait ?? 0, budget);
    const shown = await presentTask(engine, ctx, task, { notes: note ? [note] : [], budget });
    return okResult(shown.text, { task, terminal: isTerminal(task.status) }, shown.content);
  },
});
