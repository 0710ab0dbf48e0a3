/**
 * The SQLite file behind one small connection face, on Node's built-in `node:sqlite` (Node 22.13
 * and newer: nothing to install or compile). The face is async although node:sqlite is not, so the
 * store's queue and busy waits read the same as the networked stores'.
 */
import { createRequire } from "node:module";
import { LedgerError } from "../ledger-errors.js";

export type Row = Record<string, unknown>;

export interface SqliteConnection {
  /** Runs one statement; resolves to its rows (none for statements that return none). */
  query(sql: string, ...params: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

/**
 * What to do on a Node too old for node:sqlite (npm only warns about `engines`, so such an install
 * starts); shown at start and in every paid tool's refusal.
 */
export const NO_DRIVER_ACTION =
  "Upgrade Node.js to 22.13 or newer (its built-in node:sqlite needs nothing installed), then restart the MCP server.";

/** `node:sqlite` could not be loaded: nothing can be recorded, so nothing is sent. */
export class NoSqliteDriverError extends LedgerError {
  constructor(cause?: unknown) {
    super(
      "LEDGER_NO_SQLITE",
      `Node ${process.versions.node} has no node:sqlite (it needs Node 22.13 or newer), so the request ledger cannot open and paid tools send nothing`,
      { cause, action: NO_DRIVER_ACTION },
    );
  }
}

interface NodeSqlite {
  DatabaseSync: new (
    path: string,
  ) => {
    prepare(sql: string): { all(...params: unknown[]): Row[] };
    close(): void;
  };
}

let nodeSqlite: NodeSqlite | null | undefined;

/**
 * `node:sqlite`, or null where this Node has none (before 22.13 it needs a flag). Node 22 prints
 * an ExperimentalWarning when the module loads; only that one warning is held back, and only
 * during the load, so every other warning still reaches stderr.
 */
export function loadNodeSqlite(): NodeSqlite | null {
  if (nodeSqlite !== undefined) return nodeSqlite;
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === "string" ? warning : warning.message;
    if (/sqlite/i.test(text)) return;
    (emit as (...a: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    nodeSqlite = require("node:sqlite") as NodeSqlite;
  } catch {
    nodeSqlite = null;
  } finally {
    process.emitWarning = emit;
  }
  return nodeSqlite;
}

/** Opens `path` on node:sqlite. */
export async function connect(path: string): Promise<SqliteConnection> {
  const mod = loadNodeSqlite();
  if (mod === null) throw new NoSqliteDriverError();
  return openNodeSqlite(mod, path);
}

/**
 * How long node:sqlite itself may spin on a lock. Its busy handler sleeps on the event loop's own
 * thread, so a long one would freeze the whole server (and deadlock a second connection of this
 * process that holds the lock); the rest of the configured busy timeout is waited asynchronously.
 */
const SYNC_BUSY_MS = 10;
const BUSY_SETTING = /^PRAGMA busy_timeout=(\d+)$/i;

const isBusy = (err: unknown): boolean => (err as { errcode?: unknown } | null)?.errcode === 5;

function openNodeSqlite(mod: NodeSqlite, path: string): SqliteConnection {
  const db = new mod.DatabaseSync(path);
  // Statements are few and fixed (the ledger's own SQL): keep them prepared.
  const prepared = new Map<string, ReturnType<typeof db.prepare>>();
  const run = (sql: string, params: unknown[]): Row[] => {
    let stmt = prepared.get(sql);
    if (stmt === undefined) {
      stmt = db.prepare(sql);
      prepared.set(sql, stmt);
    }
    return stmt.all(...params);
  };
  let busyTimeoutMs = 0;
  return {
    query: async (sql, ...params) => {
      const setting = BUSY_SETTING.exec(sql.trim());
      if (setting) {
        busyTimeoutMs = Number(setting[1]);
        return run(`PRAGMA busy_timeout=${Math.min(busyTimeoutMs, SYNC_BUSY_MS)}`, []);
      }
      // A statement refused as busy did nothing: run it again once the lock may be free, as
      // SQLite's own busy handler would, until the configured timeout is spent.
      const deadline = Date.now() + busyTimeoutMs;
      for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
        try {
          return run(sql, params);
        } catch (err) {
          if (!isBusy(err) || Date.now() + pause > deadline) throw err;
          await new Promise((resolve) => setTimeout(resolve, pause));
        }
      }
    },
    close: async () => db.close(),
  };
}
