import { z } from "zod";
import { rootsFor } from "../calls/files/file-areas.js";
import { SaveFailedError } from "../calls/files/save-refusals.js";
import { downloadableNote, type SaveTarget, saveOutputs, saveTarget } from "../calls/paid/saving.js";
import { assetLine, resourceLinks } from "../calls/paid/task-view.js";
import { defineTool } from "../mcp/define-tool.js";
import { nextOut, TaskBriefOut, taskIdField } from "../mcp/fields.js";
import { AFTER } from "../mcp/next-steps.js";
import { Questions } from "../mcp/questions.js";
import { errorResult, okResult } from "../mcp/results.js";
import { count } from "../shared/wording.js";

export default defineTool({
  name: "save_outputs",
  title: "Save a task's outputs to disk",
  description:
    "Writes a finished task's outputs into GENERATION_OUTPUT_DIR as {taskId}-{index}.{ext}, never overwriting, and returns the paths. Free.",
  inputSchema: z.strictObject({ taskId: taskIdField }),
  outputSchema: z.object({
    task: TaskBriefOut,
    saved: z.array(z.string()),
    next: nextOut,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(args, ctx, engine) {
    const q = new Questions(ctx);
    const roots = rootsFor(engine, q);
    if (q.pending || roots === "pending") return q.result();
    let target: SaveTarget;
    try {
      // Refused up front, naming what is allowed, rather than "no downloadable outputs" later.
      target = await saveTarget(engine, roots);
    } catch (err) {
      return errorResult(err, { notes: [await downloadableNote(engine, args.taskId, ctx.signal)] });
    }
    const { saved, notes } = await saveOutputs(engine, args.taskId, target, ctx.signal);
    const task = await engine.client.getTask(args.taskId, { signal: ctx.signal });
    const missing = task.outputs.filter((o) => o.asset).length - saved.length;
    if (missing > 0) {
      // The outputs exist and are paid for: a failed write is an error, never "nothing to download".
      const failed = new SaveFailedError(`${count(missing, "output")} of task ${task.id}`);
      return errorResult(failed, { notes: [...notes, await downloadableNote(engine, task.id, ctx.signal)] });
    }
    const head = saved.length
      ? `Saved ${count(saved.length, "output")} of task ${task.id} (${task.status}).`
      : `Nothing saved for task ${task.id} (${task.status}): it has no output with a file ${task.outputs.length > 0 ? "" : "yet"}`.trim() +
        ".";
    // Each output's asset ID, which generation takes (sourceImage, referenceAssetIds, …), beside the files.
    const outputs = task.outputs.filter((o) => o.asset).map((o) => `- ${assetLine(o)}`);
    // And a resource link per output, as every task result gives them (src/calls/paid/task-view.ts).
    const structured = { task, saved, next: AFTER.saved(saved.length) };
    return okResult([head, ...outputs, ...notes].join("\n"), structured, resourceLinks(task));
  },
});
