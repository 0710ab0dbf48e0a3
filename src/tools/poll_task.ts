import { z } from "zod";
import { isTerminal } from "../service/limits.js";
import { TaskOut } from "../tooling/fields.js";
import { presentTask, waitWithProgress } from "../tooling/generate.js";
import { okResult } from "../tooling/results.js";
import { defineTool } from "../tooling/tool.js";
import { VIEWER_LINK } from "../tooling/viewer-link.js";

export const taskIdField = z
  .string()
  .min(1)
  .max(256)
  .describe("Task ID returned by a generate tool (1 to 256 characters).");

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
  meta: VIEWER_LINK,
  async handler(args, ctx, engine) {
    const first = await engine.client.getTask(args.taskId, { signal: ctx.signal });
    const { task, note } = await waitWithProgress(engine, ctx, first, args.wait ?? 0);
    const shown = await presentTask(engine, ctx, task, { notes: note ? [note] : [] });
    return okResult(shown.text, { task, terminal: isTerminal(task.status) }, shown.content);
  },
});
