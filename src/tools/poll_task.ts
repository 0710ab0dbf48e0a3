import { z } from "zod";
import { isTerminal } from "../service/limits.js";
import { callBudget } from "../tooling/budget.js";
import { TaskOut, taskIdField } from "../tooling/fields.js";
import { presentTask } from "../tooling/present.js";
import { okResult } from "../tooling/results.js";
import { defineTool } from "../tooling/tool.js";
import { waitWithProgress } from "../tooling/waiting.js";

export default defineTool({
  name: "poll_task",
  title: "Check a generation task",
  description:
    "Reads a task from generate_image, generate_video or generate_audio: its status, Gems (quoted, charged, released) and outputs with freshly signed URLs. Use it to follow a task that was not finished, with `wait` to keep polling (with progress) up to that many seconds; a wait that runs out returns the task as it stands. A terminal task says which outputs succeeded and which failed. Free: it spends no Gems and never submits work. To write outputs to disk, call save_outputs.",
  inputSchema: z.strictObject({
    taskId: taskIdField,
    wait: z
      .number()
      .min(0)
      .max(600)
      .optional()
      .describe(
        "Seconds (0 to 600) to keep polling until the task is terminal; default 0 (read once). Keep it under ~50 where the host cuts calls at 60 s.",
      ),
  }),
  outputSchema: z.object({
    task: TaskOut,
    terminal: z.boolean().describe("True once the task is succeeded, partial, failed or cancelled."),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
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
