/**
 * Saving a task's outputs to disk: where a save may go (checked BEFORE a paid submission, so a
 * save that cannot work never follows a charge), and the save itself, whose every failure after a
 * charge says the work is done and how to get the files (save_outputs), never "nothing was sent".
 */
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import path from "node:path";
import { limitSignal } from "../client/deadline.js";
import type { Engine } from "../mcp/context.js";
import { describeError, LocalRefusal } from "../mcp/results.js";
import { allowedDirs, isInside, resolveDir, saveInside, validRoots } from "./files.js";
import { outputName } from "./task-view.js";

/** Largest single output saved to disk (it is held in memory while written). */
export const SAVE_MAX_BYTES = 256 * 1024 * 1024;

const HOW_TO_ALLOW =
  "Allow a directory: list it in GENERATION_FILES (and GENERATION_OUTPUT_DIR inside it) where the server is configured, or add it to the host's MCP roots when the host offers roots.";

/**
 * The directories a save may write into: GENERATION_FILES, narrowed by the client's roots
 * (`undefined` when it offers none). Refuses, naming what is allowed and how to allow more, when
 * the output directory lies outside them or cannot be written.
 */
export async function saveTarget(engine: Engine, roots: string[] | undefined): Promise<string[]> {
  const { files, outputDir } = engine.config;
  const dirs = await allowedDirs(files, roots);
  const refuse = (why: string): LocalRefusal =>
    new LocalRefusal("SAVE_NOT_ALLOWED", `Outputs cannot be saved: ${why}`, HOW_TO_ALLOW);
  if (dirs.length === 0) {
    throw refuse(`no directory is allowed. ${await inForce(files, roots)}`);
  }
  const { resolved, existing } = await resolveDir(path.resolve(outputDir));
  if (!dirs.some((d) => isInside(d, resolved))) {
    throw refuse(
      `the output directory ${outputDir} is outside the allowed directories (in force: ${dirs.join(", ")}). ${await inForce(files, roots)}`,
    );
  }
  try {
    await access(existing, constants.W_OK);
  } catch (err) {
    throw refuse(
      `the output directory ${outputDir} cannot be written (${(err as NodeJS.ErrnoException).code}).`,
    );
  }
  return dirs;
}

/** Where the directories in force come from: GENERATION_FILES, and what the client's roots did to it. */
async function inForce(files: string[], roots: string[] | undefined): Promise<string> {
  const configured = `GENERATION_FILES is ${files.join(", ") || "empty"}`;
  if (roots === undefined) return `${configured}; the client offers no MCP roots.`;
  if ((await validRoots(roots)).length === 0) {
    const given = roots.length === 0 ? "an empty list" : `${roots.join(", ")}, none an existing directory`;
    return `${configured}; the client's MCP roots (${given}) leave it as it is.`;
  }
  return `${configured}, narrowed by the client's MCP roots (${roots.join(", ")}).`;
}

export interface SaveResult {
  saved: string[];
  notes: string[];
}

/**
 * Saves every output with an asset into the output directory, from a freshly read task, within
 * `timeMs`. Never throws: the task is already paid for, so each failure becomes a note.
 */
export async function saveOutputs(
  engine: Engine,
  taskId: string,
  dirs: string[],
  caller: AbortSignal,
  timeMs = Number.POSITIVE_INFINITY,
): Promise<SaveResult> {
  const cap = limitSignal(caller, timeMs);
  const saved: string[] = [];
  const notes: string[] = [];
  const why = (err: unknown) => (cap.expired() ? "not finished within this call's time" : failure(err));
  try {
    const task = await engine.client.getTask(taskId, { signal: cap.signal });
    for (const out of task.outputs) {
      if (!out.asset) continue;
      try {
        const { bytes } = await engine.client.fetchOutput(out.asset.url, {
          signal: cap.signal,
          maxBytes: SAVE_MAX_BYTES,
        });
        const name = outputName(task.id, out.index, out.asset.mimeType);
        saved.push(await saveInside(engine.config.outputDir, name, bytes, dirs));
      } catch (err) {
        notes.push(`Output #${out.index} not saved: ${why(err)}.`);
      }
    }
  } catch (err) {
    notes.push(`Outputs not saved: the task could not be read (${why(err)}).`);
  }
  cap.release();
  if (saved.length > 0) notes.push(`Saved: ${saved.join(", ")}`);
  return { saved, notes };
}

/** The cause of a failed save, without the "call again; nothing was sent" advice of a refusal. */
function failure(err: unknown): string {
  const errno = (err as NodeJS.ErrnoException | null)?.code;
  const described = describeError(err).code;
  // A file system error is named by its errno (EACCES, ENOSPC), not as a fault of the server.
  const code = described === "INTERNAL_ERROR" && typeof errno === "string" ? errno : described;
  const message = err instanceof Error ? err.message : String(err);
  return message.startsWith(`${code}:`) ? message : `${code}: ${message}`;
}

/** What follows save failures after a charge: the work is done; this is how to get the files. */
export const afterChargeSaveNote = (taskId: string): string =>
  `The task ${taskId} is done and its Gems are charged; do not submit again. Its outputs stay on the service: call save_outputs with {"taskId": ${JSON.stringify(taskId)}} once saving is possible, or use the URLs above.`;
