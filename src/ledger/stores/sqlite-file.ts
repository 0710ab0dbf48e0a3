/**
 * Where the SQLite ledger lives: its URI read by the one store URI reader, the directory made for
 * it, and the file's identity (device and inode) that the store compares before each claim. What
 * this process creates is private to its user: directories 0700, the file 0600 (SQLite gives its
 * -wal and -shm files the database file's mode), and so is a copy written back.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { dirname } from "node:path";
import { parseStoreUri, type StoreLocation, StoreUriError } from "../../config/store-uri.js";
import { LedgerError } from "../ledger-errors.js";

export interface SqliteUri {
  path: string;
  busyTimeoutMs: number;
}

/** `sqlite://PATH[?busyTimeoutMs=N]`, read by the one store URI reader. */
export function parseSqliteUri(uri: string): SqliteUri {
  let location: StoreLocation;
  try {
    location = parseStoreUri(uri);
  } catch (cause) {
    throw cause instanceof StoreUriError
      ? new LedgerError("LEDGER_CONFIG", `store URI: ${cause.message}`)
      : cause;
  }
  if (location.kind !== "sqlite") throw new LedgerError("LEDGER_CONFIG", "store URI: expected sqlite://");
  return { path: location.path, busyTimeoutMs: location.busyTimeoutMs };
}

/** Device and inode: what makes "this path still names the file we opened" a cheap check. */
export interface FileId {
  dev: number;
  ino: number;
}

/** Modes of what the ledger creates: its records hold prompts, and OAuth's grants and clients. */
const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

/**
 * `mkdir -p` one level at a time, the ledger's own directory (the last) made private and those
 * above it as usual (`~/.local/share` stays what other programs expect). Node's own recursive
 * mkdir never returns for some paths (e.g. under /proc, Node 20), which would hang startup; a
 * plain mkdir fails fast instead.
 */
export function ensureDir(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d) && missing.length < 64; d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) mkdirSync(d, d === dir ? { mode: PRIVATE_DIR } : {});
}

/**
 * The ledger's directory made (private), and its file created private unless it exists, before
 * SQLite opens it (SQLite would create it readable by all). A path SQLite cannot open either is
 * reported when it tries, with its reason.
 */
export function prepareLedgerPath(path: string): void {
  try {
    ensureDir(dirname(path));
  } catch (cause) {
    throw new LedgerError("LEDGER_UNAVAILABLE", `cannot create the ledger directory ${dirname(path)}`, {
      cause,
    });
  }
  try {
    createPrivateFile(path);
  } catch {
    // connect() says why this path cannot be a database.
  }
}

/** Creates `path` empty and private (0600) unless it exists. */
export function createPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, "wx", PRIVATE_FILE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

export function fileId(path: string): FileId | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  return st === undefined ? undefined : { dev: st.dev, ino: st.ino };
}

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Where `writeBack` put the records, and whether that is the path the server opens at start. */
export interface WrittenBack {
  path: string;
  atOriginal: boolean;
}

/**
 * The records of a ledger whose file was deleted (or replaced) under a running server still live
 * in the open connection: `VACUUM INTO` copies them into a new file, which is synced and then
 * linked to the original path when it is free (so the next start resumes the same identities), or
 * beside it under a `.recovered-…` name when another file took the path. A link never overwrites,
 * so nothing another process wrote there is lost; the copy is whole before it has a name a start
 * would open.
 */
export async function writeBack(
  vacuumInto: (target: string) => Promise<unknown>,
  path: string,
  now = new Date(),
): Promise<WrittenBack> {
  ensureDir(dirname(path));
  const temp = `${path}.writeback-${process.pid}-${randomBytes(4).toString("hex")}`;
  // VACUUM INTO fills an empty file it is given, keeping its mode.
  createPrivateFile(temp);
  await vacuumInto(temp);
  try {
    syncFile(temp);
    const stamp = now.toISOString().replace(/[:.]/g, "-");
    const candidates = [path, `${path}.recovered-${stamp}`, `${path}.recovered-${stamp}-${process.pid}`];
    for (const [i, target] of candidates.entries()) {
      try {
        linkSync(temp, target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
        throw err;
      }
      syncDir(dirname(path));
      return { path: target, atOriginal: i === 0 };
    }
    throw new Error(`every name beside ${path} for the copy is taken`);
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // already gone: nothing to tidy
    }
  }
}

function syncFile(path: string): void {
  const fd = openSync(path, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The new name must survive a crash too; a platform that cannot sync a directory skips it. */
function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Windows opens no directory for syncing; its rename/link is durable through the journal.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * What a store whose file went away says: the refusal every later claim gets (naming where the
 * records were written back and what a restart then does) and the line for the operator.
 */
export function fileGone(
  path: string,
  how: "deleted" | "replaced by another file",
  saved: WrittenBack | Error,
): { error: LedgerError; notice: string } {
  const what = `the ledger file ${path} was ${how} while the server ran`;
  if (saved instanceof Error) {
    const message = `${what}, and writing its records back failed (${saved.message}): requests recorded since it opened could not be found after a restart`;
    const error = new LedgerError("LEDGER_FILE_GONE", message, {
      action:
        "Restart the MCP server so it opens its ledger file afresh; requests recorded in the deleted file are forgotten, so check the tasks already submitted (poll_task with their task IDs) before repeating paid work.",
    });
    return { error, notice: `${message}. Paid calls are refused until the server restarts.` };
  }
  const refused = "Until then paid calls are refused and nothing is sent.";
  if (saved.atOriginal) {
    const message = `${what}; the requests it recorded were written back to ${path} from the open connection`;
    const error = new LedgerError("LEDGER_FILE_GONE", message, {
      action: `Restart the MCP server: it reopens ${path}, and an identical call then resumes its earlier identity instead of paying again. ${refused}`,
    });
    const notice = `${message}. Paid calls are refused until the server restarts; after it, identical calls resume their identities.`;
    return { error, notice };
  }
  const message = `${what}; the requests this server recorded were written to ${saved.path} beside it`;
  const error = new LedgerError("LEDGER_FILE_GONE", message, {
    action: `To keep them, stop the MCP server, move ${saved.path} to ${path} (or name it as the ledger store), and start the server again: an identical call then resumes its earlier identity instead of paying again. ${refused}`,
  });
  return { error, notice: `${message}. Paid calls are refused until the server restarts.` };
}
