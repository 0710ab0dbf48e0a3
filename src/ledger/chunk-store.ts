/**
 * Binary values beside the ledger's records, in the same store: the media viewer's upload chunks
 * (src/calls/uploads/upload-store.ts), each one row of bytes (a BLOB in SQLite, bytea in
 * PostgreSQL, a Redis string written from a Buffer: stores/chunks-redis.ts) under its upload and
 * number, never text: no base64 or JSON is built, stored or parsed for them, and an upload's
 * chunks go in one statement. Every write skips a sync of its own (SQLite commits at NORMAL,
 * PostgreSQL with synchronous_commit off): a staged chunk lost in a crash of the machine loses
 * only the upload in progress, which the user chooses again, since nothing of it reaches the
 * service before the synced move to "sending"; and that synced commit makes every chunk written
 * before it durable too (the WAL is flushed in order on both).
 */
import type { SqlAccess } from "./keyed-store.js";

export interface ChunkStore {
  /** Stores chunk `seq` of `upload` (replacing the same bytes a resent copy wrote), to expire after `ttlMs`. */
  put(upload: string, seq: number, bytes: Uint8Array, ttlMs: number): Promise<void>;
  /** Chunk `seq`'s bytes, or undefined when absent or expired. */
  get(upload: string, seq: number): Promise<Uint8Array | undefined>;
  /** Deletes every chunk of `upload` (it has at most `count`). */
  drop(upload: string, count: number): Promise<void>;
  /** Deletes expired chunks (stores without their own expiry); the count removed. */
  sweep(now: number): Promise<number>;
}

export const SQLITE_CHUNKS = "ledger_chunks";
export const POSTGRES_CHUNKS = "generation_mcp_chunks";

/** The chunk table's definition; `bytes` is the binary column type (BLOB, bytea). */
export const chunkTable = (table: string, bytes: string, text: string): string =>
  `CREATE TABLE IF NOT EXISTS ${table} (upload ${text} NOT NULL, seq integer NOT NULL, exp bigint NOT NULL, data ${bytes} NOT NULL, PRIMARY KEY (upload, seq))`;

/** Chunks in one SQL table of (upload, seq, exp, data) rows. `p(n)`: the positional parameter. */
class SqlChunks implements ChunkStore {
  constructor(
    private readonly a: SqlAccess,
    private readonly table: string,
    private readonly p: (n: number) => string,
    private readonly now: () => number,
  ) {}

  async put(upload: string, seq: number, bytes: Uint8Array, ttlMs: number): Promise<void> {
    const { p } = this;
    await (this.a.deferred ?? this.a.write)(
      `INSERT INTO ${this.table}(upload, seq, exp, data) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)})
       ON CONFLICT (upload, seq) DO UPDATE SET exp = excluded.exp, data = excluded.data`,
      [upload, seq, this.now() + ttlMs, bytes],
    );
  }

  async get(upload: string, seq: number): Promise<Uint8Array | undefined> {
    const { p } = this;
    const rows = await this.a.read(
      `SELECT data FROM ${this.table} WHERE upload = ${p(1)} AND seq = ${p(2)} AND exp > ${p(3)}`,
      [upload, seq, this.now()],
    );
    const data = rows[0]?.data;
    return data instanceof Uint8Array ? data : undefined;
  }

  async drop(upload: string): Promise<void> {
    await (this.a.deferred ?? this.a.write)(`DELETE FROM ${this.table} WHERE upload = ${this.p(1)}`, [
      upload,
    ]);
  }

  async sweep(now: number): Promise<number> {
    const rows = await this.a.write(`DELETE FROM ${this.table} WHERE exp <= ${this.p(1)} RETURNING seq`, [
      now,
    ]);
    return rows.length;
  }
}

export const sqliteChunks = (access: SqlAccess, now: () => number = Date.now): ChunkStore =>
  new SqlChunks(access, SQLITE_CHUNKS, () => "?", now);
export const postgresChunks = (access: SqlAccess, now: () => number = Date.now): ChunkStore =>
  new SqlChunks(access, POSTGRES_CHUNKS, (n) => `$${n}`, now);
