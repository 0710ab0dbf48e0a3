/**
 * The only way tools touch the filesystem. Reads: regular files inside the allowed
 * directories after resolving every link, checked again on the opened descriptor, typed
 * by their bytes. Writes: safe names inside the output directory, never through a link.
 * Allowed directories are GENERATION_FILES narrowed by the client's MCP roots.
 */

import { randomUUID } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { type FileHandle, link, mkdir, open, realpath, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ArgumentError } from "../service/errors.js";

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
  /** The resolved path that was checked. */
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
  const before = await stat(real);
  if (!before.isFile()) {
    throw new ArgumentError(rules.field, `${p} is not a regular file`);
  }
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    // The path may have been swapped between the checks and the open: compare inodes.
    const after = await handle.stat();
    if (!after.isFile() || !sameFile(before, after)) {
      throw outside(rules.field, `${p} (changed while it was being opened)`, dirs);
    }
    const min = rules.minBytes ?? 1;
    if (after.size < min || after.size > rules.maxBytes) {
      throw new ArgumentError(
        rules.field,
        `the file is ${after.size} bytes; the limit is ${min} to ${rules.maxBytes} bytes`,
      );
    }
    const head = new Uint8Array(Math.min(after.size, 4100));
    await handle.read(head, 0, head.length, 0);
    const type = await sniff(head);
    const why = rules.accept(type);
    if (why !== undefined) {
      throw new ArgumentError(rules.field, `${p} ${why} (judged by its bytes, not its name)`);
    }
    return {
      realPath: real,
      readPath: await descriptorPath(handle, real),
      name: path.basename(real),
      size: after.size,
      type: type as MediaType,
      close: () => handle.close(),
    };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** On Linux /proc/self/fd/N reopens the very file checked, closing the swap window. */
async function descriptorPath(handle: FileHandle, real: string): Promise<string> {
  const viaFd = `/proc/self/fd/${handle.fd}`;
  try {
    const [a, b] = await Promise.all([stat(viaFd), handle.stat()]);
    return sameFile(a, b) ? viaFd : real;
  } catch {
    return real;
  }
}

/** A file name with nothing but letters, digits, `-`, `_` and `.`; no leading dot. */
export function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "");
  return (cleaned || "output").slice(0, 200);
}

/**
 * Writes `bytes` as `dir/name` (or `name-1`, `name-2`… when taken), creating `dir`, which
 * must lie inside the allowed directories. A temporary file is linked into place: link()
 * neither follows nor replaces what is at the target, so nothing is ever overwritten.
 */
export async function saveInside(
  dir: string,
  name: string,
  bytes: Uint8Array,
  dirs: string[],
): Promise<string> {
  const wanted = path.resolve(dir);
  if (!dirs.some((d) => isInside(d, wanted))) throw outside("save", `The output directory ${dir}`, dirs);
  await mkdir(wanted, { recursive: true });
  const real = await realpath(wanted);
  if (!dirs.some((d) => isInside(d, real))) {
    throw outside("save", `The output directory ${dir} (resolved to ${real})`, dirs);
  }
  const safe = safeName(name);
  const temp = path.join(real, `.${safe}.${process.pid}.${randomUUID()}.part`);
  const handle = await open(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o644,
  );
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    const ext = path.extname(safe);
    const stem = safe.slice(0, safe.length - ext.length);
    for (let n = 0; n < 1000; n++) {
      const target = path.join(real, n === 0 ? safe : `${stem}-${n}${ext}`);
      try {
        await link(temp, target);
        return target;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
    throw new Error(`too many files named like ${safe} in ${real}`);
  } finally {
    await rm(temp, { force: true });
  }
}
