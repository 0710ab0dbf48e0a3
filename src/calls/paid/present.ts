/**
 * A task as a tool result: text (status, identity, Gems, URLs, the next step), resource links,
 * best-effort image previews and, on request, the outputs saved to disk, all within what is left
 * of the call's budget.
 */
import type { ContentBlock } from "@modelcontextprotocol/server";
import type { Task } from "../../client/schemas.js";
import { isTerminal } from "../../config/service-limits.js";
import { ANSWER_MS, PREVIEW_CAP_MS } from "../../config/time-limits.js";
import type { Budget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import { savesOnDisk } from "../files/files-rule.js";
import { afterChargeSaveNote, type SaveTarget, saveOutputs } from "./saving.js";
import { imagePreviews, resourceLinks, taskNext, taskText } from "./task-view.js";

export interface Presentation {
  identity?: string;
  reused?: boolean;
  joined?: boolean;
  created?: boolean;
  /** Save the outputs there (checked before the submission). */
  dirs?: SaveTarget | undefined;
  notes?: string[];
  budget: Budget;
}

export async function presentTask(
  engine: Engine,
  ctx: ToolContext,
  task: Task,
  o: Presentation,
): Promise<{ text: string; next: string; content: ContentBlock[]; saved?: string[] }> {
  const notes = [...(o.notes ?? [])];
  const previewMs = Math.min(PREVIEW_CAP_MS, o.budget.remainingMs() - ANSWER_MS);
  const { blocks, notes: previewNotes } = await imagePreviews(
    engine,
    task,
    ctx.signal,
    Math.max(0, previewMs),
  );
  notes.push(...previewNotes);
  let saved: string[] | undefined;
  if (o.dirs && isTerminal(task.status)) {
    const result = await saveOutputs(engine, task.id, o.dirs, ctx.signal, o.budget.remainingMs() - ANSWER_MS);
    saved = result.saved;
    notes.push(...result.notes);
    const expected = task.outputs.filter((x) => x.asset).length;
    if (saved.length < expected) notes.push(afterChargeSaveNote(task.id));
  } else if (o.dirs) {
    notes.push(
      "Not saved yet: the task is not finished; call save_outputs with the task ID once poll_task says it is.",
    );
  }
  const shown = {
    ...o,
    wait: engine.config.defaultWaitSeconds,
    saves: savesOnDisk(engine),
    notes,
    ...(saved ? { saved } : {}),
  };
  const text = taskText(task, shown);
  const content = [...resourceLinks(task), ...blocks];
  return { text, next: taskNext(task, shown), content, ...(saved ? { saved } : {}) };
}
