import { z } from "zod";
import { Questions } from "../tooling/ask.js";
import { TaskOut, taskIdField } from "../tooling/fields.js";
import { okResult } from "../tooling/results.js";
import { saveOutputs, saveTarget } from "../tooling/saving.js";
import { defineTool } from "../tooling/tool.js";

export default defineTool({
  name: "save_outputs",
  title: "Save a task's outputs to disk",
  description:
    "Writes every output of a finished task into the output directory (GENERATION_OUTPUT_DIR, inside the allowed directories) as {taskId}-{index}.{ext}, downloading through freshly signed URLs, and returns the paths. Use it when the user wants files rather than links. It never overwrites: an existing name gets a numbered suffix. Spends no Gems.",
  inputSchema: z.strictObject({ taskId: taskIdField }),
  outputSchema: z.object({
    task: TaskOut,
    saved: z.array(z.string()).describe("Absolute paths of the files written."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(args, ctx, engine) {
    const q = new Questions(ctx);
    const roots = q.roots();
    if (q.pending || roots === "pending") return q.result();
    // Refused up front, naming what is allowed, rather than "no downloadable outputs" later.
    const dirs = await saveTarget(engine, roots);
    const { saved, notes } = await saveOutputs(engine, args.taskId, dirs, ctx.signal);
    const task = await engine.client.getTask(args.taskId, { signal: ctx.signal });
    const head = saved.length
      ? `Saved ${saved.length} output${saved.length === 1 ? "" : "s"} of task ${task.id} (${task.status}).`
      : `Nothing saved for task ${task.id} (${task.status}): it has no downloadable outputs${notes.length ? " that could be written" : " yet"}.`;
    return okResult([head, ...notes].join("\n"), { task, saved });
  },
});
