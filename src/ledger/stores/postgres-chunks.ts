/**
 * The upload chunks' table on PostgreSQL (chunk-store.ts): bytea rows, stored out of line as they
 * are (media bytes do not compress, so pglz would only spend time on them), each chunk written in
 * a transaction of its own with synchronous_commit off (chunk-store.ts says why no sync is lost).
 */
import type { Pool, PoolClient } from "pg";
import { type ChunkStore, chunkTable, POSTGRES_CHUNKS, postgresChunks } from "../chunk-store.js";

/** Creates the table (inside postgres.ts's table creation, under its advisory lock). */
export async function createChunkTable(client: PoolClient): Promise<void> {
  await client.query(chunkTable(POSTGRES_CHUNKS, "bytea", 'text COLLATE "C"'));
  // Only when it is not so already: ALTER TABLE takes a lock every replica's uploads would wait on.
  await client.query(`DO $$ BEGIN
    IF (SELECT attstorage FROM pg_attribute WHERE attrelid = '${POSTGRES_CHUNKS}'::regclass AND attname = 'data') <> 'e'
    THEN ALTER TABLE ${POSTGRES_CHUNKS} ALTER COLUMN data SET STORAGE EXTERNAL; END IF; END $$`);
}

export function postgresChunkStore(pool: Pool): ChunkStore {
  const read = async (sql: string, params: unknown[]) => (await pool.query(sql, params)).rows;
  const deferred = async (sql: string, params: unknown[]) => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN; SET LOCAL synchronous_commit = off");
      const { rows } = await client.query(sql, params);
      await client.query("COMMIT");
      return rows;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  };
  return postgresChunks({ read, write: read, deferred });
}
