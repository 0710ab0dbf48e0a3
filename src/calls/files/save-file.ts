/**
 * Saving bytes as a new file inside the allowed directories, also while someone swaps a directory
 * on the way for a link to elsewhere. Every name is made, linked and removed through a directory
 * held open, never through a path walked again. Step by step, with what a swap can do at each:
 *
 * 1. The output directory is judged by its path, lexically and then with links resolved as far as
 *    it exists. A refusal here has touched nothing but those reads.
 * 2. The walk opens the nearest existing directory of the allowed one it lies in (O_DIRECTORY) and
 *    asks the kernel where the opened directory is: a swap on the way before the open is refused
 *    here. Each further part is made (mkdir) and opened (O_NOFOLLOW) inside the directory held
 *    before it: a part swapped for a link fails to open (ELOOP) and is never followed, so no
 *    directory is ever made outside.
 * 3. In the last directory held, a temporary file is created (O_EXCL, O_NOFOLLOW), written and
 *    synced; it is linked under its name (link() neither follows nor replaces what is there, so
 *    nothing is overwritten), and the temporary name is removed, all inside that same directory.
 * 4. The held directory itself may still be renamed elsewhere as a whole. After the link, where it
 *    is now is asked again; a name that left the allowed directories is removed there and refused.
 *
 * "Through the directory held" is /proc/self/fd/N/name on Linux: the kernel resolves the
 * descriptor's own directory, not a path, so no swap redirects it (what openat() and linkat()
 * would do; Node has neither). Where there is no /proc (macOS, Windows), names go through the
 * checked path and each step is judged after it by device and inode (a file that landed elsewhere
 * is removed), which narrows the race to the instant between a step and its check.
 */

import { randomUUID } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { type FileHandle, link, lstat, mkdir, open, readlink, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { type FileScope, isInside, refusal, resolveDir, sameFile } from "./files.js";

// O_DIRECTORY and O_NOFOLLOW are absent on Windows (a directory opens there all the same).
const DIR_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0);
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

const changed = (): Error => Object.assign(new Error("changed while saving"), { code: "ENOENT" });

/** A file name with nothing but letters, digits, `-`, `_` and `.`; no leading dot. */
export function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "");
  return (cleaned || "output").slice(0, 200);
}

/** A directory held open, and how to name what is inside that very directory. */
interface Held {
  /** Its path when it was checked. */
  readonly path: string;
  /** A path to `name` inside the held directory. */
  at(name: string): string;
  /** Whether `name` inside it is the file `stats` describe, and the directory is inside `dirs`. */
  holds(name: string, stats: Stats, dirs: string[]): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Opens the directory at `openAs` (a path through the parent held, or the start's own path), which
 * is `named`. With /proc the kernel's word settles where it is; without, `named` must reach it.
 */
async function hold(openAs: string, named: string, checkName: boolean): Promise<Held> {
  const handle: FileHandle = await open(openAs, DIR_FLAGS);
  try {
    const own = await handle.stat();
    const proc = `/proc/self/fd/${handle.fd}`;
    const anchored = await stat(`${proc}/.`).then(
      (s) => sameFile(s, own),
      () => false,
    );
    if (anchored ? checkName && (await readlink(proc)) !== named : !sameFile(await stat(named), own)) {
      throw changed();
    }
    return {
      path: named,
      at: (name) => (anchored ? `${proc}/${name}` : path.join(named, name)),
      async holds(name, stats, dirs) {
        // A removed directory reads as "<path> (deleted)": its files are gone with it.
        const where = anchored ? await readlink(proc) : named;
        if (where.endsWith(" (deleted)") || !dirs.some((d) => isInside(d, where))) return false;
        if (anchored) return true;
        const [entry, dir] = await Promise.all([lstat(path.join(named, name)), stat(named)]);
        return sameFile(entry, stats) && sameFile(dir, own);
      },
      close: () => handle.close(),
    };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Holds `start` (an existing real directory), then makes and holds each of `parts` inside it. */
async function walk(start: string, parts: string[]): Promise<Held> {
  let held = await hold(start, start, true);
  try {
    for (const part of parts) {
      await mkdir(held.at(part)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "EEXIST") throw err;
      });
      const next = await hold(held.at(part), path.join(held.path, part), false);
      await held.close();
      held = next;
    }
    return held;
  } catch (err) {
    await held.close();
    throw err;
  }
}

/**
 * Writes `bytes` as `dir/name` (or `name-1`, `name-2`… when taken), creating `dir`, which must
 * lie inside the scope's directories; returns the path written, as the scope shows it.
 */
export async function saveInside(
  dir: string,
  name: string,
  bytes: Uint8Array,
  scope: FileScope,
): Promise<string> {
  const wanted = path.resolve(dir);
  const what = `The output directory ${scope.show(wanted)}`;
  if (!scope.dirs.some((d) => isInside(d, wanted))) throw scope.outside("save", what);
  let ahead: string;
  let held: Held;
  try {
    ahead = (await resolveDir(wanted)).resolved;
    const home = scope.dirs.find((d) => isInside(d, ahead));
    if (home === undefined) throw scope.outside("save", `${what} (resolved to ${scope.show(ahead)})`);
    // The allowed directory may not exist yet (a remote user's own folder): start where it does.
    const { existing } = await resolveDir(home);
    if (!isInside(existing, ahead)) throw changed();
    held = await walk(existing, path.relative(existing, ahead).split(path.sep).filter(Boolean));
  } catch (err) {
    throw refusal("save", what, err, "written");
  }
  try {
    return scope.show(path.join(ahead, await writeNew(held, safeName(name), bytes, scope, what)));
  } catch (err) {
    throw refusal("save", what, err, "written");
  } finally {
    await held.close();
  }
}

/** The temporary file, written, synced and linked under the first free name; returns that name. */
async function writeNew(
  held: Held,
  safe: string,
  bytes: Uint8Array,
  scope: FileScope,
  what: string,
): Promise<string> {
  // The random name exists nowhere else, so removing it removes only the temporary file.
  const part = `.${safe}.${process.pid}.${randomUUID()}.part`;
  const handle = await open(held.at(part), WRITE_FLAGS, 0o644);
  try {
    let written: Stats;
    try {
      written = await handle.stat();
      if (!(await held.holds(part, written, scope.dirs))) throw changed();
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    const final = await linkFree(held, part, safe);
    if (!(await held.holds(final, written, scope.dirs))) {
      await unlink(held.at(final)).catch(() => undefined);
      throw scope.outside("save", `${what} (it was moved while saving)`);
    }
    return final;
  } finally {
    await unlink(held.at(part)).catch(() => undefined);
  }
}

/** Links `part` as `name`, or the first free `name-N`, inside the held directory. */
async function linkFree(held: Held, part: string, name: string): Promise<string> {
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 0; n < 1000; n++) {
    const candidate = n === 0 ? name : `${stem}-${n}${ext}`;
    try {
      await link(held.at(part), held.at(candidate));
      return candidate;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  throw new Error(`too many files named like ${name} in the output directory`);
}
