/**
 * Which of the server's files a caller may use. Someone on this machine (stdio; loopback HTTP with
 * key auth) works in GENERATION_FILES narrowed by the client's MCP roots, with paths as they are.
 * Remote users (`--auth oauth`, or HTTP bound beyond loopback: `remoteUsers` in the configuration)
 * use none unless the operator set GENERATION_FILES; then each key has a folder of its own under
 * every one of those directories, paths are relative to it, their MCP roots are not asked (they
 * name the client's disk, not this one), and no message names a server path. Every remote refusal
 * that need not read the disk is made before the disk is touched, so it reads the same, in the
 * same time, whether a path exists or not.
 */
import { lstat } from "node:fs/promises";
import path from "node:path";
import type { Engine } from "../../mcp/context.js";
import type { Questions } from "../../mcp/questions.js";
import { ArgumentError } from "../../shared/local-refusals.js";
import { allowedDirs, type FileScope, isInside, localScope, realDir } from "./files.js";
import { savesOnDisk } from "./files-rule.js";
import { SaveNotAllowedError } from "./save-refusals.js";

/** What reads or writes the server's files: an upload by path, a voice by path, a save. */
export type FileUse = "asset" | "voice" | "save";

/** A remote user's folder under each directory: the first 32 hex digits of their key's hash. */
export const areaName = (keyHash: string): string => keyHash.slice(0, 32);

const NO_PATHS = "this server reads none of its own files for remote users, so no path can be used";

/** The refusal of every use of the server's files by a remote user where the operator allowed none. */
function withoutFiles(use: FileUse): Error {
  if (use === "asset") {
    return new ArgumentError(
      "path",
      `${NO_PATHS}; send the file itself: base64 \`data\` in upload_asset (its type is read from the bytes), or the media viewer's upload (upload_asset with neither path nor data lets the user choose the file there)`,
    );
  }
  if (use === "voice") {
    return new ArgumentError(
      "path",
      `${NO_PATHS}; send the recording itself through the media viewer's upload: upload_voice without path lets the user choose it there and confirm the rights`,
    );
  }
  return new SaveNotAllowedError(
    "Outputs are not saved on this server for remote users: it keeps no files of theirs",
    "Take the outputs from their signed URLs (poll_task gives fresh ones once they expire), their resource links (generation://tasks/{taskId}/outputs/{index}), or Download in the media viewer; leave out save: true and save_outputs on this server.",
  );
}

/** Refuses at once, touching nothing, a remote user's use of files where the operator allowed none. */
export function refuseWithoutFiles(engine: Engine, use: FileUse): void {
  if (!savesOnDisk(engine)) throw withoutFiles(use);
}

/** The client's roots where they count ("pending" until it answers); remote users' are not asked. */
export function rootsFor(engine: Engine, q: Questions): string[] | undefined | "pending" {
  return engine.config.remoteUsers ? undefined : q.roots();
}

/** The directories in force for this caller, and how paths look to them. */
export async function fileScope(
  engine: Engine,
  roots: string[] | undefined,
  use: FileUse,
): Promise<FileScope> {
  refuseWithoutFiles(engine, use);
  if (!engine.config.remoteUsers) return localScope(await allowedDirs(engine.config.files, roots));
  const bases = (await Promise.all(engine.config.files.map(realDir))).filter(
    (d): d is string => d !== undefined,
  );
  // Configured, but none of the directories exists: the same as none configured.
  if (bases.length === 0) throw withoutFiles(use);
  return remoteScope(bases.map((b) => path.join(b, areaName(engine.keyHash))));
}

const YOUR_FOLDER = "your own folder on this server";

function remoteScope(dirs: string[]): FileScope {
  return {
    dirs,
    remote: true,
    async locate(p, field) {
      const rel = relativeInside(p, field);
      // Looked up in the user's folder under each directory, in order: all of them are theirs.
      for (const d of dirs) {
        const candidate = path.join(d, rel);
        if (
          await lstat(candidate).then(
            () => true,
            () => false,
          )
        )
          return candidate;
      }
      return path.join(dirs[0] as string, rel);
    },
    show(p) {
      const d = dirs.find((dir) => isInside(dir, p));
      return d === undefined ? "(a place outside your folder)" : path.relative(d, p) || ".";
    },
    outside: (field, what) =>
      new ArgumentError(
        field,
        `${what} is outside ${YOUR_FOLDER}; only files in it can be used, named relative to it (such as photo.png or generated/…)`,
      ),
  };
}

/** A remote user's path, judged by its letters alone: relative, and never climbing out. */
function relativeInside(p: string, field: string): string {
  const rel = path.normalize(p);
  if (p.startsWith("~") || path.isAbsolute(rel) || rel === ".." || rel.startsWith(`..${path.sep}`)) {
    throw new ArgumentError(
      field,
      `${p} is not a path inside ${YOUR_FOLDER}: name files relative to it (such as photo.png or generated/…); absolute paths, ~ and .. are not used for remote users`,
    );
  }
  return rel;
}
