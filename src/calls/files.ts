/**
 * The only way tools touch the filesystem. Reads: regular files inside the allowed
 * directories after resolving every link, checked again on the opened descriptor, typed
 * by their bytes. Writes: safe names inside the output directory, never through a link.
 * Allowed directories are GENERATION_FILES narrowed by the client's MCP roots.
 */

import { randomUUID } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { type FileHandle, link, mkdir, open, readlink, realpath, stat, unlink } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ArgumentError } from "../client/service-errors.js";
import { byteSize } from "../client/wording.js";

// Every refusal here is local, so it is an INVALID_ARGUMENT naming the argument.
const outside = (field: string, what: string, dirs: string[]): ArgumentError =>
  new ArgumentError(
    field,
    `${what} is outside the allowed directories (${dirs.join(", ") || "none are allowed"}); only files inside GENERATION_FILES, narrowed by the client's MCP roots, can be used`,
  );

/** `dir` contains `p` (or is it), judged by path segments, never by string prefix. */
export function isInside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

async function realDir(p: string): Promise<string | undefined> {
  try {
    const real = await realpath(p);
    return (await stat(real)).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Configured directories, resolved; when the client offers roots (file:// URIs), only
 * the parts inside both survive. An empty list means nothing is allowed.
 */
export async function allowedDirs(configured: string[], roots?: string[]): Promise<string[]> {
  const base = (await Promise.all(configured.map(realDir))).filter((d): d is string => d !== undefined);
  if (roots === undefined) return base;
  const rootDirs: string[] = [];
  for (const uri of roots) {
    if (!uri.startsWith("file:")) continue;
    const dir = await realDir(fileURLToPath(uri));
    if (dir) rootDirs.push(dir);
  }
  const out = new Set<string>();
  for (const c of base) {
    for (const r of rootDirs) {
      if (isInside(c, r)) out.add(r);
      else if (isInside(r, c)) out.add(c);
    }
  }
  return [...out];
}

/** A caller's path: `~` is the home directory; relative paths start at the first allowed directory. */
export function expand(p: string, dirs: string[]): string {
  if (p === "~" || p.startsWith("~/")) return path.join(homedir(), p.slice(1));
  if (path.isAbsolute(p)) return path.normalize(p);
  return path.resolve(dirs[0] ?? process.cwd(), p);
}

export interface MediaType {
  mime: string;
  ext: string;
}

export interface OpenedFile {
  /** Where the opened file really is (inside the allowed directories). */
  realPath: string;
  /** A path that reopens exactly the checked file (the descriptor itself on Linux). */
  readPath: string;
  name: string;
  size: number;
  type: MediaType;
  close(): Promise<void>;
}

export interface ReadRules {
  /** Argument name, for messages. */
  field: string;
  maxBytes: number;
  minBytes?: number;
  /** Accepts a type sniffed from the first bytes; says why not otherwise. */
  accept(type: MediaType | undefined): string | undefined;
}

const sameFile = (a: Stats, b: Stats): boolean => a.dev === b.dev && a.ino === b.ino;

/** Sniffs a media type from the first bytes (file-type is loaded on first use). */
export async function sniff(bytes: Uint8Array): Promise<MediaType | undefined> {
  const { fileTypeFromBuffer } = await import("file-type");
  return fileTypeFromBuffer(bytes);
}

// O_NOFOLLOW and O_NONBLOCK are absent on Windows; O_NONBLOCK keeps a FIFO from stalling the open.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** Errors of a walk that met a path being changed (removed, swapped for a link, not a directory). */
const CHANGED = new Set(["ENOENT", "ELOOP", "ENOTDIR", "EISDIR"]);

/** A file system error during a check, as the caller's argument error (never an internal fault). */
function refusal(field: string, p: string, err: unknown, doing = "opened"): unknown {
  if (err instanceof ArgumentError) return err;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== "string") return err;
  return new ArgumentError(
    field,
    CHANGED.has(code)
      ? `${p} vanished or changed while it was being ${doing} (${code})`
      : `${p} cannot be ${doing} (${code})`,
  );
}

/**
 * Where the file behind `handle` really is. Path strings are checked before the open, but any
 * directory on the way may be swapped for a link between that check and the open, so only the
 * opened file is judged. Linux names it (/proc/self/fd/N); elsewhere the path is resolved again
 * and must reach the very same file (device and inode) as the handle.
 */
async function openedAt(handle: FileHandle, again: () => Promise<string>): Promise<string> {
  const held = await handle.stat();
  let where: string;
  try {
    where = await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    where = await again();
  }
  // A removed file reads as "<path> (deleted)"; its stat then fails or names another file.
  const seen = await stat(where);
  if (!sameFile(seen, held)) throw Object.assign(new Error("not the opened file"), { code: "ENOENT" });
  return where;
}

/** Opens a file for upload after every check; the caller must `close()` it. */
export async function openMedia(p: string, dirs: string[], rules: ReadRules): Promise<OpenedFile> {
  const wanted = expand(p, dirs);
  let real: string;
  try {
    real = await realpath(wanted);
  } catch {
    if (!dirs.some((d) => isInside(d, wanted))) throw outside(rules.field, p, dirs);
    throw new ArgumentError(rules.field, `${p} does not exist`);
  }
  if (!dirs.some((d) => isInside(d, real))) throw outside(rules.field, `${p} (resolved to ${real})`, dirs);
  let handle: FileHandle;
  try {
    // Cheap refusal of a directory or device before opening it; the handle is what is trusted.
    if (!(await stat(real)).isFile()) throw new ArgumentError(rules.field, `${p} is not a regular file`);
    handle = await open(real, READ_FLAGS);
  } catch (err) {
    throw refusal(rules.field, p, err);
  }
  try {
    return await checkOpened(handle, p, wanted, dirs, rules);
  } catch (err) {
    await handle.close();
    throw refusal(rules.field, p, err);
  }
}

/** The checks that count, all on the opened file: where it is, what it is, its size and bytes. */
async function checkOpened(
  handle: FileHandle,
  p: string,
  wanted: string,
  dirs: string[],
  rules: ReadRules,
): Promise<OpenedFile> {
  const where = await openedAt(handle, () => realpath(wanted));
  if (!dirs.some((d) => isInside(d, where))) {
    throw outside(rules.field, `${p} (opened ${where}; the path changed while it was being opened)`, dirs);
  }
  const held = await handle.stat();
  if (!held.isFile()) throw new ArgumentError(rules.field, `${p} is not a regular file`);
  const min = rules.minBytes ?? 1;
  if (held.size < min || held.size > rules.maxBytes) {
    throw new ArgumentError(
      rules.field,
      `the file is ${byteSize(held.size)}; the limit is ${byteSize(min)} to ${byteSize(rules.maxBytes)}`,
    );
  }
  const head = new Uint8Array(Math.min(held.size, 4100));
  await handle.read(head, 0, head.length, 0);
  const type = await sniff(head);
  const why = rules.accept(type);
  if (why !== undefined) {
    throw new ArgumentError(rules.field, `${p} ${why} (judged by its bytes, not its name)`);
  }
  return {
    realPath: where,
    readPath: await descriptorPath(handle, where),
    name: path.basename(where),
    size: held.size,
    type: type as MediaType,
    close: () => handle.close(),
  };
}

/**
 * A path that opens the very file held: /proc/self/fd/N on Linux, /dev/fd/N on macOS and the
 * BSDs (both reach the open file itself, whatever happens to the directories meanwhile). Only
 * where neither exists is the checked real path handed on.
 */
async function descriptorPath(handle: FileHandle, real: string): Promise<string> {
  const held = await handle.stat();
  for (const viaFd of [`/proc/self/fd/${handle.fd}`, `/dev/fd/${handle.fd}`]) {
    try {
      if (sameFile(await stat(viaFd), held)) return viaFd;
    } catch {
      // Not on this system: try the next.
    }
  }
  return real;
}

/** `p` with links resolved as far as it exists, and the nearest part of it that exists. */
export async function resolveDir(p: string): Promise<{ resolved: string; existing: string }> {
  for (let at = p; ; at = path.dirname(at)) {
    try {
      const existing = await realpath(at);
      return { resolved: path.join(existing, path.relative(at, p)), existing };
    } catch {
      if (path.dirname(at) === at) return { resolved: p, existing: at };
    }
  }
}

/** A file name with nothing but letters, digits, `-`, `_` and `.`; no leading dot. */
export function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "");
  return (cleaned || "output").slice(0, 200);
}

/**
 * Writes `bytes` as `dir/name` (or `name-1`, `name-2`… when taken), creating `dir`, which
 * must lie inside the allowed directories. A temporary file is created (never through a link),
 * judged by where it was really created, and only then written and linked into place: link()
 * neither follows nor replaces what is at the target, so nothing is ever overwritten.
 */
export async function saveInside(
  dir: string,
  name: string,
  bytes: Uint8Array,
  dirs: string[],
): Promise<string> {
  const wanted = path.resolve(dir);
  const what = `The output directory ${dir}`;
  if (!dirs.some((d) => isInside(d, wanted))) throw outside("save", what, dirs);
  let real: string;
  try {
    // mkdir -p follows links: a link planted on the way would have it make directories outside.
    const ahead = (await resolveDir(wanted)).resolved;
    if (!dirs.some((d) => isInside(d, ahead))) throw outside("save", `${what} (resolved to ${ahead})`, dirs);
    await mkdir(wanted, { recursive: true });
    real = await realpath(wanted);
  } catch (err) {
    throw refusal("save", what, err, "written");
  }
  if (!dirs.some((d) => isInside(d, real))) throw outside("save", `${what} (resolved to ${real})`, dirs);
  const safe = safeName(name);
  const part = `.${safe}.${process.pid}.${randomUUID()}.part`;
  const temp = path.join(real, part);
  let handle: FileHandle;
  try {
    handle = await open(temp, WRITE_FLAGS, 0o644);
  } catch (err) {
    throw refusal("save", what, err, "written");
  }
  // Where the temporary file was really created; removed there whatever happens.
  let landed = temp;
  try {
    try {
      // A directory on the way may have become a link since realpath: nothing is written
      // until the created file is known to sit in the checked directory.
      landed = await openedAt(handle, async () => path.join(await realpath(wanted), part));
      if (path.dirname(landed) !== real) {
        throw outside("save", `${what} (it changed while saving and led to ${path.dirname(landed)})`, dirs);
      }
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return await linkFree(temp, real, safe);
  } catch (err) {
    throw refusal("save", what, err, "written");
  } finally {
    // The random name exists nowhere else, so this removes only the temporary file.
    await unlink(temp).catch(() => undefined);
    if (landed !== temp) await unlink(landed).catch(() => undefined);
  }
}

/** Links `temp` as `dir/name`, or the first free `name-N`, and returns the name used. */
async function linkFree(temp: string, dir: string, name: string): Promise<string> {
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 0; n < 1000; n++) {
    const target = path.join(dir, n === 0 ? name : `${stem}-${n}${ext}`);
    try {
      await link(temp, target);
      return target;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  throw new Error(`too many files named like ${name} in ${dir}`);
}
