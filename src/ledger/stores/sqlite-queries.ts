/**
 * The SQLite store's statements that do more than read or write one key (sqlite.ts): the fresh
 * claim, the compare-and-set, a page of one key's records filtered and ordered in SQL, and the
 * sweep of expired records with the index rows they leave behind. Records live as `{"value": …}`
 * JSON in one `ledger(key, value)` table.
 */
import { TERMINAL_STATUSES } from "../../config/service-limits.js";
import { type ListQuery, NAMESPACE } from "../store.js";

export interface Statement {
  sql: string;
  params: unknown[];
}

export const TABLE = "ledger";

/**
 * A call never seen before, in one statement (one commit): its record and index rows, inserted
 * only if no index row exists. A writing statement takes the write lock before it reads, so the
 * check and the insert are atomic across processes. Params: record key and value, index key and
 * value, index key.
 */
export const FRESH_CLAIM = `INSERT INTO ${TABLE}(key, value)
    SELECT column1, column2 FROM (VALUES (?, ?), (?, ?))
    WHERE NOT EXISTS (SELECT 1 FROM ${TABLE} WHERE key = ?)
  ON CONFLICT(key) DO NOTHING RETURNING key`;

/** Compare-and-set: lands only on the version the caller read. Params: new value, key, version. */
export const REPLACE_ON_VERSION = `UPDATE ${TABLE} SET value = ? WHERE key = ?
    AND coalesce(json_extract(value, '$.value.version'), 0) = ? RETURNING key`;

const field = (name: string): string => `json_extract(value, '$.value.${name}')`;

/** One page of `q.keyHash`'s records, newest first, after the cursor: only `limit` rows leave SQLite. */
export function pageQuery(table: string, q: ListQuery): Statement {
  const lo = `${NAMESPACE}:rec:${q.keyHash}:`;
  const where = [`key >= ? AND key < ?`, `(${field("expiresAt")} IS NULL OR ${field("expiresAt")} > ?)`];
  // Keys are ASCII and ':' + 1 = ';', so this range is exactly the prefix, on the primary key.
  const params: unknown[] = [lo, `${lo.slice(0, -1)};`, q.now];
  const open = `${field("state")} IN ('prepared', 'sent', 'uncertain') OR (${field("state")} = 'succeeded' AND NOT ${field("delivered")})`;
  if (q.state === "open") {
    where.push(`(${open})`);
  } else if (q.state === "unfinished") {
    // isRunningTask (record-rules.ts): a terminal sighting is in `seen`, or in the last status read.
    const terminal = [...TERMINAL_STATUSES].map((s) => `'${s}'`).join(", ");
    where.push(
      `(${open} OR (${field("state")} = 'succeeded' AND ${field("taskId")} IS NOT NULL AND ${field("seen")} IS NULL AND COALESCE(${field("lastStatus.status")}, '') NOT IN (${terminal})))`,
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
  return {
    sql: `SELECT key, value FROM ${table} WHERE ${where.join(" AND ")}
         ORDER BY ${field("createdAt")} DESC, ${field("identity")} DESC LIMIT ?`,
    params: [...params, q.limit],
  };
}

/** Expired records (returning their keys), then index rows whose record is gone. */
export function sweepQueries(table: string, now: number): [Statement, Statement] {
  const rec = `${NAMESPACE}:rec:`;
  const idx = `${NAMESPACE}:idx:`;
  return [
    {
      sql: `DELETE FROM ${table} WHERE key >= ? AND key < ?
         AND ${field("expiresAt")} IS NOT NULL AND ${field("expiresAt")} <= ? RETURNING key`,
      params: [rec, `${NAMESPACE}:rec;`, now],
    },
    {
      sql: `DELETE FROM ${table} WHERE key >= ? AND key < ? AND NOT EXISTS (
         SELECT 1 FROM ${table} r WHERE r.key = ? || json_extract(${table}.value, '$.value.keyHash')
           || ':' || json_extract(${table}.value, '$.value.identity'))`,
      params: [idx, `${NAMESPACE}:idx;`, rec],
    },
  ];
}
