/**
 * The two ways this process can reach a SQLite file, behind one small connection face:
 * Node's built-in `node:sqlite` (Node 22.13 and newer: nothing to install or compile) and the
 * `sqlite3` native module (an optional peer dependency, installed beside this package on Node 20.19
 * to 22.12; it is not installed with it, since compiling it costs newer Node's users over a minute
 * for a module they never load). Both write the same
 * file format, so a ledger moves between them unchanged.
 */
import { createRequire } from "node:module";
import { LedgerError } from "./ledger-errors.js";

export type SqliteDriverName = "node:sqlite" | "sqlite3";
export type Row = Record<string, unknown>;

export interface SqliteConnection {
  readonly driver: SqliteDriverName;
  /** Runs one statement; resolves to its rows (none for statements that return none). */
  query(sql: string, ...params: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

/**
 * What to do when neither driver loads; shown at start and in every paid tool's refusal. The major
 * version is named: the peer range is sqlite3 ^5 (the one tested), and `npx -p sqlite3` resolves a
 * bare name to the latest (6.x), which npm then refuses as a peer conflict (ERESOLVE).
 */
export const NO_DRIVER_ACTION =
  "Upgrade Node.js to 22.13 or newer (its built-in node:sqlite needs nothing installed), or install the sqlite3 module beside generation-mcp: `npm install sqlite3@5` in the folder generation-mcp is installed in, or with npx start it as `npx -y -p generation-mcp -p sqlite3@5 generation-mcp`; then restart the MCP server.";

/** Neither `node:sqlite` nor `sqlite3` could be loaded: nothing can be recorded, so nothing is sent. */
export class NoSqliteDriverError extends LedgerError {
  constructor(detail: string, cause?: unknown) {
    super(
      "LEDGER_NO_SQLITE",
      `no SQLite driver is available on Node ${process.versions.node} (${detail}), so the request ledger cannot open and paid tools send nothing`,
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

/** Opens `path` with the driver asked for, or the best one this Node has. */
export async function connect(path: string, driver?: SqliteDriverName): Promise<SqliteConnection> {
  if (driver !== "sqlite3") {
    const mod = loadNodeSqlite();
    if (mod !== null) return openNodeSqlite(mod, path);
    if (driver === "node:sqlite") {
      throw new NoSqliteDriverError("node:sqlite needs Node 22.13 or newer");
    }
  }
  return openSqlite3(path, driver === "sqlite3");
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
    driver: "node:sqlite",
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

interface Sqlite3Statement {
  all(params: unknown[], cb: (err: Error | null, rows: Row[]) => void): void;
  finalize(cb: () => void): void;
}

interface Sqlite3Database {
  prepare(sql: string, cb: (err: Error | null) => void): Sqlite3Statement;
  close(cb: (err: Error | null) => void): void;
}

async function openSqlite3(path: string, asked: boolean): Promise<SqliteConnection> {
  let sqlite3: { Database: new (path: string, cb: (err: Error | null) => void) => Sqlite3Database };
  try {
    const mod = (await import("sqlite3")) as { default?: typeof sqlite3 } & typeof sqlite3;
    sqlite3 = mod.default ?? mod;
  } catch (cause) {
    const why = asked
      ? "the sqlite3 module asked for did not load"
      : "node:sqlite needs Node 22.13 or newer, and no sqlite3 module is installed beside generation-mcp";
    throw new NoSqliteDriverError(why, cause);
  }
  const db = await new Promise<Sqlite3Database>((resolve, reject) => {
    const opened: Sqlite3Database = new sqlite3.Database(path, (err) =>
      err ? reject(err) : resolve(opened),
    );
  });
  // Statements are few and fixed (the ledger's own SQL): prepared once, not on every query. The
  // store runs one statement at a time, so a prepared one is never in use twice.
  const prepared = new Map<string, Promise<Sqlite3Statement>>();
  const statement = (sql: string): Promise<Sqlite3Statement> => {
    let ready = prepared.get(sql);
    if (ready === undefined) {
      ready = new Promise<Sqlite3Statement>((resolve, reject) => {
        const stmt = db.prepare(sql, (err) => (err ? reject(err) : resolve(stmt)));
      });
      prepared.set(sql, ready);
      // A statement that failed to prepare is not kept.
      ready.catch(() => prepared.delete(sql));
    }
    return ready;
  };
  return {
    driver: "sqlite3",
    query: async (sql, ...params) => {
      const stmt = await statement(sql);
      return new Promise((resolve, reject) =>
        stmt.all(params, (err, rows) => (err ? reject(err) : resolve(rows))),
      );
    },
    close: async () => {
      const open = await Promise.all([...prepared.values()].map((p) => p.catch(() => undefined)));
      prepared.clear();
      await Promise.all(open.map((s) => new Promise<void>((r) => (s ? s.finalize(r) : r()))));
      await new Promise<void>((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
