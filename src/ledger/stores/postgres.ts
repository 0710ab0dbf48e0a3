/**
 * The ledger on PostgreSQL, shared by any number of server processes. One table of JSON values
 * keyed like the SQLite store's (`rec:<keyHash>:<identity>`, `idx:<keyHash>:<bodyHash>:<tool>`),
 * with the key in the "C" collation so one key hash's records are one range of the primary key.
 * A new request is claimed in one statement; any other claim is one transaction on one connection
 * that first takes a transaction-scoped advisory lock on the request (its index entry, and its
 * explicit identity), so two replicas deciding the same request take turns; every later write is
 * one `UPDATE … WHERE version = $v`.
 * `pg` is an optional peer dependency, loaded only for postgres:// URIs.
 */
import type { Pool, PoolClient } from "pg";
import type { Durability } from "../../config/store-uri.js";
import { lazy } from "../../shared/lazy.js";
import type { ChunkStore } from "../chunk-store.js";
import { type KeyedStore, postgresKeyed } from "../keyed-store.js";
import { LedgerError } from "../ledger-errors.js";
import type { StoredRecord } from "../record.js";
import {
  type ClaimRequest,
  type ClaimResult,
  type ClaimTx,
  decideClaim,
  indexKey,
  type LedgerStore,
  type ListQuery,
  listPage,
  recordFrom,
  recordKey,
} from "../store.js";
import { optionalPeer } from "./optional-peer.js";
import { createChunkTable, postgresChunkStore } from "./postgres-chunks.js";

const TABLE = "generation_mcp_ledger";
/** How long one statement may take before the call is refused (a stalled store must not hang a call). */
const STATEMENT_TIMEOUT_MS = 10_000;

export class PostgresStore implements LedgerStore {
  readonly description: string;
  readonly durabilityNote?: string;
  readonly #pool: Pool;

  private constructor(pool: Pool, note: string | undefined) {
    this.#pool = pool;
    this.description = `postgres (fsync on, synchronous_commit on, cross-process claims)${note === undefined ? "" : `; ${note}`}`;
    if (note !== undefined) this.durabilityNote = note;
  }

  static async open(connection: string, durability: Durability): Promise<PostgresStore> {
    const pg = await loadPg();
    const pool = new pg.Pool({
      connectionString: withSynchronousCommit(connection),
      max: 10,
      connectionTimeoutMillis: 5_000,
      query_timeout: STATEMENT_TIMEOUT_MS,
    });
    // An idle connection dropped by the server must not crash the process; the next query fails.
    pool.on("error", () => {});
    let note: string | undefined;
    try {
      note = await checkDurability(pool, durability);
      await createTable(pool);
    } catch (cause) {
      await pool.end().catch(() => {});
      if (cause instanceof LedgerError) throw cause;
      throw new LedgerError("LEDGER_UNAVAILABLE", `cannot open the postgres ledger: ${pgText(cause)}`, {
        cause,
      });
    }
    return new PostgresStore(pool, note);
  }

  async get(keyHash: string, identity: string): Promise<StoredRecord | undefined> {
    const key = recordKey(keyHash, identity);
    const { rows } = await this.#pool.query(`SELECT value::text AS v FROM ${TABLE} WHERE key = $1`, [key]);
    return rows[0] === undefined ? undefined : recordFrom(rows[0].v, key);
  }

  async replace(prev: StoredRecord, next: StoredRecord): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `UPDATE ${TABLE} SET value = $2::jsonb
        WHERE key = $1 AND coalesce((value->>'version')::bigint, 0) = $3`,
      [recordKey(prev.keyHash, prev.identity), JSON.stringify(next), prev.version],
    );
    return rowCount === 1;
  }

  async claim(req: ClaimRequest): Promise<ClaimResult> {
    if (req.identity === undefined) {
      const fresh = await this.#claimFresh(req);
      if (fresh !== undefined) return fresh;
    }
    return this.#claimLocked(req);
  }

  /**
   * The common case, a call never seen before, in one statement (one commit): insert the index
   * entry, and the record only if that insert won. A concurrent identical claim waits on the
   * uncommitted index row, then finds it and inserts nothing. Anything else goes to the full claim.
   */
  async #claimFresh(req: ClaimRequest): Promise<ClaimResult | undefined> {
    const rec = req.fresh(req.newIdentity());
    const { rowCount } = await this.#pool.query(
      `WITH idx AS (
         INSERT INTO ${TABLE}(key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO NOTHING RETURNING key)
       INSERT INTO ${TABLE}(key, value) SELECT $3, $4::jsonb FROM idx ON CONFLICT (key) DO NOTHING`,
      [
        indexKey(req.keyHash, req.tool, req.bodyHash),
        JSON.stringify({ keyHash: req.keyHash, identity: rec.identity }),
        recordKey(req.keyHash, rec.identity),
        JSON.stringify(rec),
      ],
    );
    return rowCount === 1 ? { kind: "new", record: rec } : undefined;
  }

  /** Read, decide and write in one transaction, under advisory locks on the request. */
  async #claimLocked(req: ClaimRequest): Promise<ClaimResult> {
    const client = await this.#pool.connect();
    // A server that dies mid-transaction fails the query; the client's own error event must not
    // take the process down with it.
    const ignore = () => {};
    client.on("error", ignore);
    let broken = false;
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL synchronous_commit = on");
      // Locks in one order (request, then identity) so two claims never wait on each other in a cycle.
      const locks = [indexKey(req.keyHash, req.tool, req.bodyHash)];
      if (req.identity !== undefined) locks.push(recordKey(req.keyHash, req.identity));
      for (const lock of locks)
        await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [lock]);
      const result = await decideClaim(tx(client), req);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      broken = true;
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      // A connection that failed mid-transaction is not handed out again.
      client.off("error", ignore);
      client.release(broken);
    }
  }

  async #range(prefix: string): Promise<StoredRecord[]> {
    // ':' + 1 = ';': in the "C" collation this range is exactly the prefix, on the primary key.
    const { rows } = await this.#pool.query(
      `SELECT key, value::text AS v FROM ${TABLE} WHERE key >= $1 AND key < $2`,
      [prefix, `${prefix.slice(0, -1)};`],
    );
    return rows.map((row: { key: string; v: string }) => recordFrom(row.v, row.key));
  }

  list(keyHash: string): Promise<StoredRecord[]> {
    return this.#range(`rec:${keyHash}:`);
  }

  /** A page of one key's records: read by key hash alone, then ordered and cut here. */
  async listPage(q: ListQuery): Promise<StoredRecord[]> {
    return listPage(await this.list(q.keyHash), q);
  }

  listAll(): Promise<StoredRecord[]> {
    return this.#range("rec:");
  }

  async sweep(now: number): Promise<number> {
    const { rowCount } = await this.#pool.query(
      `DELETE FROM ${TABLE} WHERE key >= 'rec:' AND key < 'rec;'
         AND (value->>'expiresAt')::bigint <= $1`,
      [now],
    );
    await this.#pool.query(
      `DELETE FROM ${TABLE} i WHERE key >= 'idx:' AND key < 'idx;' AND NOT EXISTS (
         SELECT 1 FROM ${TABLE} r WHERE r.key = 'rec:' || (i.value->>'keyHash') || ':' || (i.value->>'identity'))`,
    );
    return rowCount ?? 0;
  }

  keyed(): KeyedStore {
    return postgresKeyed(async (sql, params) => (await this.#pool.query(sql, params)).rows);
  }

  chunks(): ChunkStore {
    return postgresChunkStore(this.#pool);
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}

/**
 * Creates the table once, however many replicas start at the same moment: CREATE TABLE IF NOT
 * EXISTS alone races in the catalog, so the replicas take turns on an advisory lock.
 */
async function createTable(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [TABLE]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${TABLE} (key text COLLATE "C" PRIMARY KEY, value jsonb NOT NULL)`,
    );
    await createChunkTable(client);
    // A real write at open: a store we cannot write refuses to open, not later mid-call.
    await client.query(
      `INSERT INTO ${TABLE}(key, value) VALUES ('meta', '{"v":1,"schema":1}')
       ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    );
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

function tx(client: PoolClient): ClaimTx {
  return {
    get: async (key) => {
      const { rows } = await client.query(`SELECT value::text AS v FROM ${TABLE} WHERE key = $1`, [key]);
      return rows[0] === undefined ? undefined : JSON.parse(rows[0].v as string);
    },
    insertIfAbsent: async (key, value) => {
      const { rowCount } = await client.query(
        `INSERT INTO ${TABLE}(key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO NOTHING`,
        [key, JSON.stringify(value)],
      );
      return rowCount === 1;
    },
    put: async (key, value) => {
      await client.query(
        `INSERT INTO ${TABLE}(key, value) VALUES ($1, $2::jsonb)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [key, JSON.stringify(value)],
      );
    },
  };
}

/**
 * A commit is on disk before it is acknowledged only with fsync on (and synchronous_commit on,
 * which every connection sets). fsync is the server's: refused unless the operator relaxed it.
 */
async function checkDurability(pool: Pool, durability: Durability): Promise<string | undefined> {
  const { rows } = await pool.query(
    "SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync",
  );
  if (rows[0]?.sync !== "on") {
    throw new LedgerError(
      "LEDGER_NOT_DURABLE",
      "the postgres connection would not set synchronous_commit = on",
    );
  }
  if (rows[0]?.fsync === "on") return undefined;
  const line = "the postgres server runs with fsync=off, so a claim may be lost in a crash";
  if (durability === "relaxed") return `${line} (accepted with durability=relaxed)`;
  throw new LedgerError(
    "LEDGER_NOT_DURABLE",
    `${line}; set fsync = on in postgresql.conf, or accept it with ?durability=relaxed`,
  );
}

/**
 * Every connection commits synchronously, whatever the server's or role's default: a write must be
 * on disk before it is acknowledged. Set at connection start (libpq's `options`), after any options
 * the URI already carries, so it wins.
 */
function withSynchronousCommit(connection: string): string {
  const url = new URL(connection);
  const given = url.searchParams.get("options");
  url.searchParams.set("options", `${given === null ? "" : `${given} `}-c synchronous_commit=on`);
  return url.href;
}

const pgPackage = lazy(() => import("pg"));
async function loadPg(): Promise<typeof import("pg").default> {
  const mod = (await optionalPeer(pgPackage, "pg", "postgres")) as {
    default?: typeof import("pg").default;
  };
  return mod.default ?? (mod as unknown as typeof import("pg").default);
}

/** pg's messages name hosts and settings, never the password; the code helps a reader more. */
function pgText(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  const message = typeof e?.message === "string" ? e.message : String(err);
  return typeof e?.code === "string" ? `${message} (${e.code})` : message;
}
