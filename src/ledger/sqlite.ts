/**
 * The default ledger store: keyv over @keyv/sqlite, in WAL with synchronous=FULL (checked, not
 * assumed: @keyv/sqlite sets no PRAGMAs), claims in one `BEGIN IMMEDIATE` transaction so two
 * processes on one file cannot both claim an identity.
 *
 * One sqlite3 connection serves the whole process, so a statement issued while a transaction is
 * open would join it: every statement goes through one queue.
 */
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, resolve } from "node:path";
import KeyvSqlite from "@keyv/sqlite";
import Keyv from "keyv";
import { LedgerError, parseRecord, type StoredRecord } from "./record.js";
import {
  type ClaimRequest,
  type ClaimResult,
  type ClaimTx,
  decideClaim,
  indexKey,
  KeyvStore,
  type ListQuery,
  NAMESPACE,
  recordKey,
} from "./store.js";

const TABLE = "ledger";
const DEFAULT_BUSY_TIMEOUT_MS = 5000;

type Query = (sql: string, ...params: unknown[]) => Promise<Array<Record<string, unknown>>>;

/** `sqlite://PATH[?busyTimeoutMs=N]`; `~/` is the home directory. */
export function parseSqliteUri(uri: string): { path: string; busyTimeoutMs: number } {
  const rest = uri.slice("sqlite://".length);
  const q = rest.indexOf("?");
  let path = q === -1 ? rest : rest.slice(0, q);
  const params = new URLSearchParams(q === -1 ? "" : rest.slice(q + 1));
  if (path === "" || path === ":memory:" || path.startsWith("file:")) {
    throw new LedgerError(
      "LEDGER_CONFIG",
      "GENERATION_STORE: sqlite:// needs a file path (an in-memory ledger would not survive a restart)",
    );
  }
  if (path.startsWith("~/")) path = resolve(homedir(), path.slice(2));
  const raw = params.get("busyTimeoutMs");
  const busyTimeoutMs = raw === null ? DEFAULT_BUSY_TIMEOUT_MS : Number(raw);
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > 600_000) {
    throw new LedgerError(
      "LEDGER_CONFIG",
      "GENERATION_STORE: busyTimeoutMs must be an integer from 0 to 600000",
    );
  }
  return { path: resolve(path), busyTimeoutMs };
}

const serialize = (data: unknown): string => JSON.stringify(data);
const deserialize = <T>(data: string): T => JSON.parse(data) as T;

export class SqliteStore extends KeyvStore {
  readonly path: string;
  readonly #query: Query;

  private constructor(keyv: Keyv, query: Query, path: string) {
    super(keyv, `sqlite (WAL, synchronous=FULL, cross-process claims): ${path}`);
    this.#query = query;
    this.path = path;
  }

  static async open(uri: string): Promise<SqliteStore> {
    const { path, busyTimeoutMs } = parseSqliteUri(uri);
    try {
      ensureDir(dirname(path));
    } catch (cause) {
      throw new LedgerError("LEDGER_UNAVAILABLE", `cannot create the ledger directory ${dirname(path)}`, {
        cause,
      });
    }
    const adapter = new KeyvSqlite({ uri: `sqlite://${path}`, table: TABLE, busyTimeout: busyTimeoutMs });
    const keyv = new Keyv({
      store: adapter,
      namespace: NAMESPACE,
      serialize,
      deserialize,
      throwOnErrors: true,
    });
    // Errors are thrown to callers (throwOnErrors); the listener only keeps an emitter from crashing.
    keyv.on("error", () => {});
    const query = adapter.query as Query;
    const store = new SqliteStore(keyv, query, path);
    try {
      await store.#checkDurability(busyTimeoutMs);
      await store.probe();
    } catch (cause) {
      await adapter.close().catch(() => {});
      if (cause instanceof LedgerError) throw cause;
      throw new LedgerError("LEDGER_UNAVAILABLE", `cannot open the ledger at ${path}: ${errText(cause)}`, {
        cause,
      });
    }
    return store;
  }

  async #checkDurability(busyTimeoutMs: number): Promise<void> {
    const q = this.#query;
    await q("PRAGMA journal_mode=WAL");
    await q("PRAGMA synchronous=FULL");
    await q(`PRAGMA busy_timeout=${busyTimeoutMs}`);
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
    return this.queue.run(() => this.#query(sql, ...params));
  }

  protected override tx(): ClaimTx {
    const q = this.#query;
    const full = (key: string) => `${NAMESPACE}:${key}`;
    return {
      get: async (key) => {
        const rows = await q(`SELECT value FROM ${TABLE} WHERE key = ?`, full(key));
        const value = rows[0]?.value;
        return typeof value === "string"
          ? (deserialize<{ value: unknown }>(value).value ?? undefined)
          : undefined;
      },
      insertIfAbsent: async (key, value) => {
        const rows = await q(
          `INSERT INTO ${TABLE}(key, value) VALUES(?, ?) ON CONFLICT(key) DO NOTHING RETURNING key`,
          full(key),
          serialize({ value }),
        );
        return rows.length === 1;
      },
      put: async (key, value) => {
        await q(
          `INSERT INTO ${TABLE}(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
          full(key),
          serialize({ value }),
        );
      },
    };
  }

  override claim(req: ClaimRequest): Promise<ClaimResult> {
    const q = this.#query;
    return this.queue.run(async () => {
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
   * The common case, a call never seen before, in one statement (one commit): insert the record
   * and its index entry only if no index entry exists. A writing statement takes the write lock
   * before it reads, so the check and the insert are atomic across processes. Anything else (the
   * index exists, or another process won) inserts nothing, costs no commit, and goes to the full
   * transaction.
   */
  async #claimFresh(req: ClaimRequest): Promise<ClaimResult | undefined> {
    const q = this.#query;
    const idx = `${NAMESPACE}:${indexKey(req.keyHash, req.tool, req.bodyHash)}`;
    const rec = req.fresh(req.newIdentity());
    const rows = await q(
      `INSERT INTO ${TABLE}(key, value)
         SELECT column1, column2 FROM (VALUES (?, ?), (?, ?))
         WHERE NOT EXISTS (SELECT 1 FROM ${TABLE} WHERE key = ?)
       ON CONFLICT(key) DO NOTHING RETURNING key`,
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
    return rows.map((row) =>
      parseRecord(deserialize<{ value: unknown }>(String(row.value)).value, String(row.key)),
    );
  }

  override list(keyHash: string): Promise<StoredRecord[]> {
    return this.#records(`rec:${keyHash}:`);
  }

  /** The page in SQL: only `limit` rows leave SQLite, however many records the key has. */
  override async listPage(q: ListQuery): Promise<StoredRecord[]> {
    const lo = `${NAMESPACE}:rec:${q.keyHash}:`;
    const field = (name: string) => `json_extract(value, '$.value.${name}')`;
    const where = [`key >= ? AND key < ?`, `(${field("expiresAt")} IS NULL OR ${field("expiresAt")} > ?)`];
    const params: unknown[] = [lo, `${lo.slice(0, -1)};`, q.now];
    if (q.state === "open") {
      where.push(
        `(${field("state")} IN ('prepared', 'sent', 'uncertain') OR (${field("state")} = 'succeeded' AND NOT ${field("delivered")}))`,
      );
    } else if (q.state !== undefined && q.state !== "all") {
      where.push(`${field("state")} = ?`);
      params.push(q.state);
    }
    if (q.taskId !== undefined) {
      where.push(`${field("taskId")} = ?`);
      params.push(q.taskId);
    }
    if (q.after !== undefined) {
      where.push(`(${field("createdAt")} < ? OR (${field("createdAt")} = ? AND ${field("identity")} < ?))`);
      params.push(q.after.createdAt, q.after.createdAt, q.after.identity);
    }
    const rows = await this.query(
      `SELECT key, value FROM ${TABLE} WHERE ${where.join(" AND ")}
         ORDER BY ${field("createdAt")} DESC, ${field("identity")} DESC LIMIT ?`,
      ...params,
      q.limit,
    );
    return rows.map((row) =>
      parseRecord(deserialize<{ value: unknown }>(String(row.value)).value, String(row.key)),
    );
  }

  override listAll(): Promise<StoredRecord[]> {
    return this.#records("rec:");
  }

  override async sweep(now: number): Promise<number> {
    const rec = `${NAMESPACE}:rec:`;
    const idx = `${NAMESPACE}:idx:`;
    const removed = await this.query(
      `DELETE FROM ${TABLE} WHERE key >= ? AND key < ?
         AND json_extract(value, '$.value.expiresAt') IS NOT NULL
         AND json_extract(value, '$.value.expiresAt') <= ? RETURNING key`,
      rec,
      `${NAMESPACE}:rec;`,
      now,
    );
    await this.query(
      `DELETE FROM ${TABLE} WHERE key >= ? AND key < ? AND NOT EXISTS (
         SELECT 1 FROM ${TABLE} r WHERE r.key = ? || json_extract(${TABLE}.value, '$.value.keyHash')
           || ':' || json_extract(${TABLE}.value, '$.value.identity'))`,
      idx,
      `${NAMESPACE}:idx;`,
      rec,
    );
    return removed.length;
  }
}

/**
 * `mkdir -p` one level at a time. Node's own recursive mkdir never returns for some paths
 * (e.g. under /proc, Node 20), which would hang startup; a plain mkdir fails fast instead.
 */
function ensureDir(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d) && missing.length < 64; d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) mkdirSync(d);
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
