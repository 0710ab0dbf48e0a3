/**
 * Where the SQLite ledger lives: its URI read by the one store URI reader, the directory made for
 * it, and the file's identity (device and inode) that the store compares before each claim.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { parseStoreUri, type StoreLocation, StoreUriError } from "../config/store-uri.js";
import type { SqliteDriverName } from "./drivers.js";
import { LedgerError } from "./record.js";

const DRIVERS: Record<string, SqliteDriverName> = { node: "node:sqlite", sqlite3: "sqlite3" };

export interface SqliteUri {
  path: string;
  busyTimeoutMs: number;
  /** Only when the URI names one (`driver=node` or `driver=sqlite3`); otherwise the best available. */
  driver?: SqliteDriverName;
}

/** `sqlite://PATH[?busyTimeoutMs=N][&driver=node|sqlite3]`, read by the one store URI reader. */
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
  const out: SqliteUri = { path: location.path, busyTimeoutMs: location.busyTimeoutMs };
  if (location.driver !== undefined) out.driver = DRIVERS[location.driver] as SqliteDriverName;
  return out;
}

/** Device and inode: what makes "this path still names the file we opened" a cheap check. */
export interface FileId {
  dev: number;
  ino: number;
}

/**
 * `mkdir -p` one level at a time. Node's own recursive mkdir never returns for some paths
 * (e.g. under /proc, Node 20), which would hang startup; a plain mkdir fails fast instead.
 */
export function ensureDir(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d) && missing.length < 64; d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) mkdirSync(d);
}

export function fileId(path: string): FileId | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  return st === undefined ? undefined : { dev: st.dev, ino: st.ino };
}

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
