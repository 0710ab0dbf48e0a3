/**
 * Saving a task's outputs to disk: where a save may go (checked BEFORE a paid submission, so a
 * save that cannot work never follows a charge), and the save itself, whose every failure after a
 * charge says the work is done and how to get the files (save_outputs), never "nothing was sent".
 */
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { limitSignal } from "../../client/deadline.js";
import { isTerminal } from "../../config/service-limits.js";
import type { Engine } from "../../mcp/context.js";
import { describeError } from "../../mcp/results.js";
import { statusPredicate } from "../../shared/wording.js";
import { fileScope } from "../files/file-areas.js";
import { type FileScope, isInside, resolveDir, validRoots } from "../files/files.js";
import { saveInside } from "../files/save-file.js";
import { SaveNotAllowedError } from "../files/save-refusals.js";
import { outputName } from "./task-view.js";

/** Largest single output saved to disk (it is held in memory while written). */
export const SAVE_MAX_BYTES = 256 * 1024 * 1024;

/** Where a save goes, checked before a paid submission. */
export interface SaveTarget {
  scope: FileScope;
  /** The output directory, absolute, inside the scope's directories. */
  outputDir: string;
  /** Said beside the saved files when they went somewhere other than the configured default. */
  where?: string;
}

const refuse = (why: string, remedy: string): SaveNotAllowedError =>
  new SaveNotAllowedError(`Outputs cannot be saved: ${why}`, remedy);

/**
 * Where a save may go: the output directory inside the directories in force (GENERATION_FILES,
 * narrowed by the client's roots, `undefined` when it offers none; a remote user's own folders).
 * GENERATION_OUTPUT_DIR unset is `generated/` under the first of GENERATION_FILES, or, when the
 * client's roots leave that out (Claude Code and VS Code give the project folder), under the
 * first directory in force, the client's first root. Refuses, with the remedy that works first,
 * when the output directory lies outside or cannot be written.
 */
export async function saveTarget(engine: Engine, roots: string[] | undefined): Promise<SaveTarget> {
  const scope = await fileScope(engine, roots, "save");
  const target = scope.remote ? await remoteTarget(engine, scope) : await localTarget(engine, roots, scope);
  const { existing } = await resolveDir(target.outputDir);
  try {
    await access(existing, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw refuse(
      `the output directory ${scope.show(target.outputDir)} cannot be written (${code}).`,
      scope.remote
        ? "Tell the operator of this server: its directory for users' files cannot be written. Meanwhile take the outputs from their signed URLs or the media viewer's Download."
        : `Make ${existing} writable, or set GENERATION_OUTPUT_DIR to a writable directory inside ${scope.dirs.join(", ")}.`,
    );
  }
  return target;
}

async function localTarget(
  engine: Engine,
  roots: string[] | undefined,
  scope: FileScope,
): Promise<SaveTarget> {
  const { files, outputDir } = engine.config;
  const { dirs } = scope;
  const narrowed = roots !== undefined && (await validRoots(roots)).length > 0;
  if (dirs.length === 0) {
    throw refuse(
      `no directory is allowed. ${await inForce(files, roots)}`,
      narrowed
        ? `The client's MCP roots lie outside GENERATION_FILES: add the folder the host works in (or a parent of it) to GENERATION_FILES where the server is configured, or open the host on a folder inside ${files.join(", ") || "GENERATION_FILES"}.`
        : "Set GENERATION_FILES to existing directories where the server is configured.",
    );
  }
  const fallback = path.join(files[0] ?? homedir(), "generated");
  const wanted = path.resolve(outputDir ?? fallback);
  const inside = async (p: string) => {
    const { resolved } = await resolveDir(p);
    return dirs.some((d) => isInside(d, resolved));
  };
  if (await inside(wanted)) return { scope, outputDir: wanted };
  const first = dirs[0] as string;
  if (outputDir === undefined) {
    const moved = path.join(first, "generated");
    const why = narrowed
      ? "the client's first MCP root, whose roots leave out the default output directory"
      : "the first directory of GENERATION_FILES that exists";
    return { scope, outputDir: moved, where: `Saved into ${moved}: generated/ under ${why}.` };
  }
  throw refuse(
    `the output directory ${outputDir} is outside the allowed directories (in force: ${dirs.join(", ")}). ${await inForce(files, roots)}`,
    narrowed
      ? `Leave GENERATION_OUTPUT_DIR unset (saves then go to generated/ under the client's first root, ${path.join(first, "generated")}) or set it inside ${dirs.join(", ")}; or add ${outputDir} to the host's MCP roots.`
      : `Set GENERATION_OUTPUT_DIR inside ${dirs.join(", ")}, or add it (or a parent) to GENERATION_FILES where the server is configured.`,
  );
}

/**
 * A remote user's output directory: where GENERATION_OUTPUT_DIR sits in its directory of
 * GENERATION_FILES, inside the user's own folder there (unset: `generated/` in the first).
 */
async function remoteTarget(engine: Engine, scope: FileScope): Promise<SaveTarget> {
  const first = scope.dirs[0] as string;
  const { outputDir } = engine.config;
  if (outputDir === undefined) return { scope, outputDir: path.join(first, "generated") };
  const { resolved } = await resolveDir(path.resolve(outputDir));
  // Each folder is <directory>/<the user's own>: its parent is the operator's directory.
  const area = scope.dirs.find((d) => isInside(path.dirname(d), resolved));
  if (area === undefined) {
    throw refuse(
      "this server's output directory lies outside its directories for users' files.",
      "Tell the operator of this server (GENERATION_OUTPUT_DIR must lie inside GENERATION_FILES). Meanwhile take the outputs from their signed URLs or the media viewer's Download.",
    );
  }
  return { scope, outputDir: path.join(area, path.relative(path.dirname(area), resolved)) };
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
  target: SaveTarget,
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
        saved.push(await saveInside(target.outputDir, name, bytes, target.scope));
      } catch (err) {
        notes.push(`Output #${out.index} not saved: ${why(err)}.`);
      }
    }
  } catch (err) {
    notes.push(`Outputs not saved: the task could not be read (${why(err)}).`);
  }
  cap.release();
  if (saved.length > 0) notes.push(`Saved: ${saved.join(", ")}`, ...(target.where ? [target.where] : []));
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

/**
 * After a save failed or was refused: the task as it stands and how its outputs are reached, for
 * the outputs are on the service whatever happened on this disk.
 */
export async function downloadableNote(engine: Engine, taskId: string, signal: AbortSignal): Promise<string> {
  const poll = `poll_task with {"taskId": ${JSON.stringify(taskId)}}`;
  let task: Awaited<ReturnType<Engine["client"]["getTask"]>>;
  try {
    task = await engine.client.getTask(taskId, { signal });
  } catch {
    return `Whatever was generated stays on the service: ${poll} gives its outputs' signed URLs.`;
  }
  const urls = task.outputs.flatMap((o) => (o.asset ? [`#${o.index} ${o.asset.url}`] : []));
  const state = `Task ${task.id} ${statusPredicate(task.status)}`;
  if (!isTerminal(task.status)) return `${state}; once it finishes, ${poll} gives its outputs' signed URLs.`;
  if (urls.length === 0) return `${state}; it has no output with a file to download.`;
  return `${state}: its outputs were generated and its Gems charged (${task.chargedGems}); they remain downloadable, so do not submit again: ${urls.join(", ")} (signed URLs that expire; ${poll} gives fresh ones, or Download in the media viewer).`;
}
