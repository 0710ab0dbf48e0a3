/**
 * The only way tools read the filesystem. Reads: regular files inside the allowed directories
 * after resolving every link, checked again on the opened descriptor, typed by their bytes.
 * Allowed directories are GENERATION_FILES narrowed by the client's MCP roots (for remote users,
 * their own folders: src/calls/files/file-areas.ts); writes are src/calls/files/save-file.ts.
 */

import { constants, type Stats } from "node:fs";
import { type FileHandle, open, readlink, realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { lazy } from "../../shared/lazy.js";
import { ArgumentError } from "../../shared/local-refusals.js";
import { byteSize } from "../../shared/wording.js";

/**
 * The directories a caller may use, and how paths look to them: as they are for someone on this
 * machine; relative to their own folder, never naming the server's, for a remote user.
 */
export interface FileScope {
  /** Real directories in force (a remote user's folders may not exist yet). */
  readonly dirs: string[];
  readonly remote: boolean;
  /** The caller's path as an absolute one, or an ArgumentError naming `field`. */
  locate(p: string, field: string): Promise<string>;
  /** A server path as this caller may read it. */
  show(p: string): string;
  /** The refusal of something outside the directories in force (every refusal here is local). */
  outside(field: string, what: string): ArgumentError;
}

/** The scope of someone on this machine: `dirs` as they are, paths shown whole. */
export function localScope(dirs: string[]): FileScope {
  return {
    dirs,
    remote: false,
    locate: async (p) => expand(p, dirs),
    show: (p) => p,
    outside: (field, what) =>
      new ArgumentError(
        field,
        `${what} is outside the allowed directories (in force: ${dirs.join(", ") || "none"}); only files inside GENERATION_FILES, narrowed by the client's MCP roots when it gives any, can be used`,
      ),
  };
}

/** `dir` contains `p` (or is it), judged by path segments, never by string prefix. */
export function isInside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

export async function realDir(p: string): Promise<string | undefined> {
  try {
    const real = await realpath(p);
    return (await stat(real)).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Configured directories, resolved; when the client gives roots (file:// URIs) and at least one
 * is a valid directory, only the parts inside both survive. Roots that are absent, empty or all
 * invalid keep the configured directories, as the reference filesystem server does
 * (modelcontextprotocol/servers, src/filesystem): the MCP Inspector declares roots and answers an
 * empty list, which must not shut every file tool. With roots, the order is theirs: the first
 * directory in force is the client's first root (relative paths and the default output start there).
 */
export async function allowedDirs(configured: string[], roots?: string[]): Promise<string[]> {
  const base = (await Promise.all(configured.map(realDir))).filter((d): d is string => d !== undefined);
  const rootDirs = await validRoots(roots ?? []);
  if (rootDirs.length === 0) return base;
  const out = new Set<string>();
  for (const r of rootDirs) {
    for (const c of base) {
      if (isInside(c, r)) out.add(r);
      else if (isInside(r, c)) out.add(c);
    }
  }
  return [...out];
}

/** The roots that name an existing directory (file:// URIs only), resolved. */
export async function validRoots(roots: string[]): Promise<string[]> {
  const dirs: string[] = [];
  for (const uri of roots) {
    if (!uri.startsWith("file:")) continue;
    let p: string;
    try {
      p = fileURLToPath(uri);
    } catch {
      continue; // a file: URI with a host or bad escapes names no local directory
    }
    const dir = await realDir(p);
    if (dir) dirs.push(dir);
  }
  return dirs;
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

export const sameFile = (a: Stats, b: Stats): boolean => a.dev === b.dev && a.ino === b.ino;

const fileType = lazy(() => import("file-type"));

/** Sniffs a media type from the first bytes (file-type is loaded on first use). */
export async function sniff(bytes: Uint8Array): Promise<MediaType | undefined> {
  const { fileTypeFromBuffer } = await fileType();
  return fileTypeFromBuffer(bytes);
}

// O_NOFOLLOW and O_NONBLOCK are absent on Windows; O_NONBLOCK keeps a FIFO from stalling the open.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Errors of a walk that met a path being changed (removed, swapped for a link, not a directory). */
const CHANGED = new Set(["ENOENT", "ELOOP", "ENOTDIR", "EISDIR"]);

/** A file system error during a check, as the caller's argument error (never an internal fault). */
export function refusal(field: string, p: string, err: unknown, doing = "opened"): unknown {
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

/**
 * Whether a path that does not exist would resolve inside `dirs` (its nearest existing ancestor
 * resolved, the rest as written): a missing file behind a link that leads outside is refused as
 * outside, as an existing one is.
 */
async function resolvesInside(wanted: string, dirs: readonly string[]): Promise<boolean> {
  for (let at = path.dirname(wanted); ; at = path.dirname(at)) {
    const real = await realpath(at).catch(() => undefined);
    if (real !== undefined) {
      const wouldBe = path.join(real, path.relative(at, wanted));
      return dirs.some((d) => isInside(d, wouldBe));
    }
    if (path.dirname(at) === at) return false;
  }
}

/** Opens a file for upload after every check; the caller must `close()` it. */
export async function openMedia(p: string, scope: FileScope, rules: ReadRules): Promise<OpenedFile> {
  const { dirs } = scope;
  const wanted = await scope.locate(p, rules.field);
  // A path outside is refused in one wording, whether or not it exists and wherever a link leads:
  // the answer must not tell a model whether ~/.ssh/id_rsa is there. Decided before any lookup.
  if (!dirs.some((d) => isInside(d, wanted))) throw scope.outside(rules.field, p);
  let real: string;
  try {
    real = await realpath(wanted);
  } catch {
    if (!(await resolvesInside(wanted, dirs))) throw scope.outside(rules.field, p);
    throw new ArgumentError(rules.field, `${p} does not exist`);
  }
  if (!dirs.some((d) => isInside(d, real))) throw scope.outside(rules.field, p);
  let handle: FileHandle;
  try {
    // Cheap refusal of a directory or device before opening it; the handle is what is trusted.
    if (!(await stat(real)).isFile()) throw new ArgumentError(rules.field, `${p} is not a regular file`);
    handle = await open(real, READ_FLAGS);
  } catch (err) {
    throw refusal(rules.field, p, err);
  }
  try {
    return await checkOpened(handle, p, wanted, scope, rules);
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
  scope: FileScope,
  rules: ReadRules,
): Promise<OpenedFile> {
  const where = await openedAt(handle, () => realpath(wanted));
  if (!scope.dirs.some((d) => isInside(d, where))) {
    throw scope.outside(
      rules.field,
      `${p} (opened ${scope.show(where)}; the path changed while it was being opened)`,
    );
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
