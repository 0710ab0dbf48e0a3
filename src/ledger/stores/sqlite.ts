/**
 * The default ledger store: SQLite through the narrow store port (a claim needs its own `BEGIN
 * IMMEDIATE` transaction, which no keyv adapter offers), on Node's built-in `node:sqlite`
 * (sqlite-connection.ts), in the layout @keyv/sqlite gave the file (one `ledger(key, value)` table
 * of `{"value": …}` JSON), so earlier ledgers open unchanged. WAL with synchronous=FULL is set then
 * checked; two processes on one file never both claim an identity; before each claim the path must
 * still name the file this store opened (records written into a deleted file would be lost). One
 * connection serves the process, so every statement goes through one queue (a statement issued
 * inside an open transaction would join it).
 */
import { type ChunkStore, chunkTable, SQLITE_CHUNKS, sqliteChunks } from "../chunk-store.js";
import { type KeyedStore, type SqlAccess, sqliteKeyed } from "../keyed-store.js";
import { LedgerError } from "../ledger-errors.js";
import type { StoredRecord } from "../record.js";
import { parseRecord } from "../record-rules.js";
import {
  type ClaimRequest,
  type ClaimResult,
  type ClaimTx,
  decideClaim,
  indexKey,
  type LedgerStore,
  type ListQuery,
  NAMESPACE,
  recordKey,
  SerialQueue,
} from "../store.js";
import { connect, type SqliteConnection } from "./sqlite-connection.js";
import {
  errText,
  type FileId,
  fileGone,
  fileId,
  parseSqliteUri,
  prepareLedgerPath,
  writeBack,
} from "./sqlite-file.js";
import { FRESH_CLAIM, pageQuery, REPLACE_ON_VERSION, sweepQueries, TABLE } from "./sqlite-queries.js";

const serialize = (data: unknown): string => JSON.stringify(data);
/** A row's value: the record (or keyed value) inside the `{"value": …}` layout. */
const rowValue = (data: string): unknown => (JSON.parse(data) as { value?: unknown }).value;
const full = (key: string): string => `${NAMESPACE}:${key}`;
const toStderr = (line: string): void => void process.stderr.write(`generation-mcp: ${line}\n`);

export class SqliteStore implements LedgerStore {
  readonly path: string;
  readonly description: string;
  protected readonly queue = new SerialQueue();
  readonly #conn: SqliteConnection;
  readonly #notify: (line: string) => void;
  #file: FileId | undefined;
  /** Set once the file was found gone: every later claim is refused with the same words. */
  #gone: LedgerError | undefined;

  private constructor(conn: SqliteConnection, path: string, notify: (line: string) => void) {
    this.#conn = conn;
    this.#notify = notify;
    this.path = path;
    this.description = `sqlite via node:sqlite (WAL, synchronous=FULL, cross-process claims): ${path}`;
  }

  /** `notify` gets the one line said when the file is found gone (stderr unless a test listens). */
  static async open(uri: string, notify = toStderr): Promise<SqliteStore> {
    const { path, busyTimeoutMs } = parseSqliteUri(uri);
    prepareLedgerPath(path);
    let conn: SqliteConnection;
    try {
      conn = await connect(path);
    } catch (cause) {
      if (cause instanceof LedgerError) throw cause;
      throw new LedgerError("LEDGER_UNAVAILABLE", `cannot open the ledger at ${path}: ${errText(cause)}`, {
        cause,
      });
    }
    const store = new SqliteStore(conn, path, notify);
    try {
      await store.#checkDurability(busyTimeoutMs);
      await conn.query(`CREATE TABLE IF NOT EXISTS ${TABLE}(key VARCHAR(255) PRIMARY KEY, value TEXT )`);
      await conn.query(chunkTable(SQLITE_CHUNKS, "BLOB", "TEXT"));
      await store.probe();
      store.#file = fileId(path);
    } catch (cause) {
      await conn.close().catch(() => {});
      if (cause instanceof LedgerError) throw cause;
      throw new LedgerError("LEDGER_UNAVAILABLE", `cannot open the ledger at ${path}: ${errText(cause)}`, {
        cause,
      });
    }
    return store;
  }

  async #checkDurability(busyTimeoutMs: number): Promise<void> {
    const q = this.#q;
    // The busy timeout first: switching to WAL takes a lock another process may hold.
    await q(`PRAGMA busy_timeout=${busyTimeoutMs}`);
    await q("PRAGMA journal_mode=WAL");
    await q("PRAGMA synchronous=FULL");
    const mode = String(Object.values((await q("PRAGMA journal_mode"))[0] ?? {})[0]).toLowerCase();
    const sync = Number(Object.values((await q("PRAGMA synchronous"))[0] ?? {})[0]);
    if (mode !== "wal" || !(sync >= 2)) {
      throw new LedgerError(
        "LEDGER_NOT_DURABLE",
        `the ledger at ${this.path} runs journal_mode=${mode}, synchronous=${sync}; it needs WAL with synchronous=FULL (2)`,
      );
    }
  }

  /** Raw SQL for tests and diagnostics; goes through the same queue as everything else. */
  query(sql: string, ...params: unknown[]): Promise<Array<Record<string, unknown>>> {
    return this.queue.run(() => this.#q(sql, ...params));
  }

  readonly #q = (sql: string, ...params: unknown[]): Promise<Array<Record<string, unknown>>> =>
    this.#conn.query(sql, ...params);

  async #get(key: string): Promise<unknown> {
    const rows = await this.#q(`SELECT value FROM ${TABLE} WHERE key = ?`, full(key));
    const value = rows[0]?.value;
    return typeof value === "string" ? (rowValue(value) ?? undefined) : undefined;
  }

  async #put(key: string, value: unknown): Promise<void> {
    await this.#q(
      `INSERT INTO ${TABLE}(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
      full(key),
      serialize({ value }),
    );
  }

  /** A real write at startup: a store we cannot write refuses to open, not later mid-call. */
  probe(): Promise<void> {
    return this.queue.run(() => this.#put("meta", { v: 1, schema: 1 }));
  }

  async get(keyHash: string, identity: string): Promise<StoredRecord | undefined> {
    const key = recordKey(keyHash, identity);
    const raw = await this.queue.run(() => this.#get(key));
    return raw === undefined ? undefined : parseRecord(raw, key);
  }

  /** One conditional UPDATE (REPLACE_ON_VERSION). */
  replace(prev: StoredRecord, next: StoredRecord, o: { deferred?: boolean } = {}): Promise<boolean> {
    return this.queue.run(async () => {
      // NORMAL (this queue's own connection): a WAL commit with no sync; the next FULL one syncs it.
      if (o.deferred) await this.#q("PRAGMA synchronous=NORMAL");
      try {
        return await this.#update(prev, next);
      } finally {
        if (o.deferred) await this.#q("PRAGMA synchronous=FULL");
      }
    });
  }

  async #update(prev: StoredRecord, next: StoredRecord): Promise<boolean> {
    const rows = await this.#q(
      REPLACE_ON_VERSION,
      serialize({ value: next }),
      full(recordKey(prev.keyHash, prev.identity)),
      prev.version,
    );
    return rows.length === 1;
  }

  /** Writes refuse a deleted file as claims do; deferred ones (whose loss costs a retry or a count,
   * keyed-store.ts) commit at NORMAL, as replace's, and skip that stat. */
  keyed(): KeyedStore {
    return sqliteKeyed(this.#access());
  }

  /** The upload chunks' table (chunk-store.ts), reached as the keyed values are. */
  chunks = (): ChunkStore => sqliteChunks(this.#access());

  #access(): SqlAccess {
    const write = (deferred: boolean) => (sql: string, params: unknown[]) =>
      this.queue.run(async () => {
        if (!deferred) {
          await this.#checkFile();
          return this.#q(sql, ...params);
        }
        await this.#q("PRAGMA synchronous=NORMAL");
        return this.#q(sql, ...params).finally(() => this.#q("PRAGMA synchronous=FULL"));
      });
    return { read: (sql, p) => this.query(sql, ...p), write: write(false), deferred: write(true) };
  }

  /** A file deleted since the last claim is written back first (the connection holds its last copy). */
  async close(): Promise<void> {
    await this.queue.run(async () => {
      await this.#checkFile().catch(() => {});
      await this.#conn.close();
    });
  }

  /**
   * The path must still name the file this store opened. Deleted (or replaced) under a running
   * server, the ledger would keep recording into a file no restart can find, and an identical
   * call after the restart would be charged again. So claims stop, and the records the open
   * connection still holds are written back once (sqlite-file.ts), for the restart to resume.
   * A stat costs microseconds; a claim, a commit.
   */
  async #checkFile(): Promise<void> {
    if (this.#gone !== undefined) throw this.#gone;
    const opened = this.#file;
    if (opened === undefined) return;
    const now = fileId(this.path);
    if (now !== undefined && now.dev === opened.dev && now.ino === opened.ino) return;
    const saved = await writeBack((target) => this.#q("VACUUM INTO ?", target), this.path).catch(
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    );
    const gone = fileGone(this.path, now === undefined ? "deleted" : "replaced by another file", saved);
    this.#gone = gone.error;
    this.#notify(gone.notice);
    throw gone.error;
  }

  protected tx(): ClaimTx {
    const q = this.#q;
    return {
      get: (key) => this.#get(key),
      insertIfAbsent: async (key, value) => {
        const rows = await q(
          `INSERT INTO ${TABLE}(key, value) VALUES(?, ?) ON CONFLICT(key) DO NOTHING RETURNING key`,
          full(key),
          serialize({ value }),
        );
        return rows.length === 1;
      },
      put: (key, value) => this.#put(key, value),
    };
  }

  claim(req: ClaimRequest): Promise<ClaimResult> {
    const q = this.#q;
    return this.queue.run(async () => {
      await this.#checkFile();
      const fast = req.identity === undefined ? await this.#claimFresh(req) : undefined;
      if (fast !== undefined) return fast;
      // IMMEDIATE takes the write lock up front (waiting up to busy_timeout for another process),
      // so the read-decide-write below cannot interleave with another claimant.
      await q("BEGIN IMMEDIATE");
      try {
        const result = await decideClaim(this.tx(), req);
        await q("COMMIT");
        return result;
      } catch (err) {
        await q("ROLLBACK").catch(() => {});
        throw err;
      }
    });
  }

  /**
   * The common case, a call never seen before, in one statement (FRESH_CLAIM, one commit). Anything
   * else (the index exists, or another process won) inserts nothing, costs no commit, and goes to
   * the full transaction.
   */
  async #claimFresh(req: ClaimRequest): Promise<ClaimResult | undefined> {
    const q = this.#q;
    const idx = `${NAMESPACE}:${indexKey(req.keyHash, req.tool, req.bodyHash)}`;
    const rec = req.fresh(req.newIdentity());
    const rows = await q(
      FRESH_CLAIM,
      `${NAMESPACE}:${recordKey(req.keyHash, rec.identity)}`,
      serialize({ value: rec }),
      idx,
      serialize({ value: { keyHash: req.keyHash, identity: rec.identity } }),
      idx,
    );
    if (rows.length === 2) return { kind: "new", record: rec };
    if (rows.length !== 0) throw new LedgerError("LEDGER_RACE", "a claim wrote half its rows");
    return undefined;
  }

  async #records(prefix: string): Promise<StoredRecord[]> {
    // Keys are ASCII and ':' + 1 = ';', so this range is exactly the prefix, on the primary key.
    const lo = `${NAMESPACE}:${prefix}`;
    const hi = `${lo.slice(0, -1)};`;
    const rows = await this.query(`SELECT key, value FROM ${TABLE} WHERE key >= ? AND key < ?`, lo, hi);
    return rows.map((row) => parseRecord(rowValue(String(row.value)), String(row.key)));
  }

  list = (keyHash: string): Promise<StoredRecord[]> => this.#records(`rec:${keyHash}:`);

  /** The page in SQL: only `limit` rows leave SQLite, however many records the key has. */
  async listPage(q: ListQuery): Promise<StoredRecord[]> {
    const { sql, params } = pageQuery(TABLE, q);
    const rows = await this.query(sql, ...params);
    return rows.map((row) => parseRecord(rowValue(String(row.value)), String(row.key)));
  }

  listAll = (): Promise<StoredRecord[]> => this.#records("rec:");

  async sweep(now: number): Promise<number> {
    const [expired, orphans] = sweepQueries(TABLE, now);
    const removed = await this.query(expired.sql, ...expired.params);
    await this.query(orphans.sql, ...orphans.params);
    return removed.length;
  }
}
