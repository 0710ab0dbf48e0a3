import { z } from "zod";
import { saveOutputs, saveTarget } from "../calls/saving.js";
import { assetLine } from "../calls/task-view.js";
import { defineTool } from "../mcp/define-tool.js";
import { TaskBriefOut, taskIdField } from "../mcp/fields.js";
import { Questions } from "../mcp/questions.js";
import { okResult } from "../mcp/results.js";

export default defineTool({
  name: "save_outputs",
  title: "Save a task's outputs to disk",
  description:
    "Writes a finished task's outputs into GENERATION_OUTPUT_DIR as {taskId}-{index}.{ext}, never overwriting, and returns the paths. Free.",
  inputSchema: z.strictObject({ taskId: taskIdField }),
  outputSchema: z.object({
    task: TaskBriefOut,
    saved: z.array(z.string()),
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
    // Each output's asset ID, which generation takes (sourceImage, referenceAssetIds, …), beside the files.
    const outputs = task.outputs.filter((o) => o.asset).map((o) => `- ${assetLine(o)}`);
    return okResult([head, ...outputs, ...notes].join("\n"), { task, saved });
  },
});
