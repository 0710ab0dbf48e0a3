/**
 * A small keyed-value API beside the ledger's records, in the same store, for state that must be
 * shared by every replica and expire on its own (the OAuth grants and token hashes of
 * src/transports/oauth/). Values are opaque strings; atomicity comes from each back end's own
 * primitive: one SQL statement (SQLite, PostgreSQL), SET NX or a Lua script (Redis, keyed-redis.ts).
 * Keys live apart from the ledger's (`kv:` in the SQL tables, `gm:kv:` in Redis), so the
 * ledger's range scans never meet them. Writes may go another way than reads: on SQLite they pass
 * the same check as claims (a ledger file deleted under the server refuses them, sqlite.ts).
 */

export interface KeyedStore {
  /** The value under `key`, or undefined when it is absent or expired. */
  get(key: string): Promise<string | undefined>;
  /**
   * Stores `value` under `key`, replacing any, to expire after `ttlMs`. `deferred` (on put, swap
   * and delete): durable with the store's next durable write rather than before this resolves
   * (SQLite commits without a sync of its own; the others write as configured), for values whose
   * loss in a crash of the machine costs only a retry (the viewer's upload chunks).
   */
  put(key: string, value: string, ttlMs: number, o?: Deferred): Promise<void>;
  /**
   * Compare-and-set: stores `next` only if the live value is still `expected` (undefined: absent
   * or expired, i.e. put-if-absent). True when it stored.
   */
  swap(
    key: string,
    expected: string | undefined,
    next: string,
    ttlMs: number,
    o?: Deferred,
  ): Promise<boolean>;
  delete(key: string, o?: Deferred): Promise<void>;
  /**
   * Adds `points` to the counter under `key` in one atomic step: a counter absent or past its
   * window starts again at `points` with a window of `windowMs`; a live one keeps its window. The
   * total and when the window ends (ms since the epoch). The rate limits of
   * src/transports/oauth/store-limiter.ts count through it, so every replica shares one count.
   */
  count(key: string, points: number, windowMs: number): Promise<Counted>;
  /** Deletes expired values (stores without their own expiry); the count removed. */
  sweep(now: number): Promise<number>;
}

/** A counter's total in its window, and when the window ends (ms since the epoch). */
export interface Counted {
  points: number;
  expiresAt: number;
}

export type Deferred = { deferred?: boolean };

/** Text JSON writes as it stands inside quotes. */
const PLAIN = /^[A-Za-z0-9+/=_-]*$/;

/** Rows as a SQL driver returns them. */
type Rows = Array<Record<string, unknown>>;
export type SqlQuery = (sql: string, params: unknown[]) => Promise<Rows>;

/** How the keyed API reaches its table: reads, and writes (which may be checked first). */
export interface SqlAccess {
  read: SqlQuery;
  write: SqlQuery;
  /** A write that may skip its own sync (`deferred`); `write` where the store has no such thing. */
  deferred?: SqlQuery;
}

interface Dialect {
  table: string;
  /** The stored row's key for a keyed value. */
  prefix: string;
  /** The positional parameter `n` (1-based). */
  p(n: number): string;
  /** SQL reading the live value's text and expiry from the stored column `value`. */
  text(column: string): string;
  exp(column: string): string;
  /** How a row value is written from its JSON text parameter. */
  json(param: string): string;
  /** The stored column `value` with its counter `n` raised by the integer parameter `param`. */
  add(column: string, param: string): string;
  /** SQL reading the counter `n` of the stored column `value`. */
  n(column: string): string;
}

const SQLITE: Dialect = {
  table: "ledger",
  // The SQLite store prefixes every key with its namespace (sqlite.ts): the same here.
  prefix: "ledger:kv:",
  p: () => "?",
  text: (c) => `json_extract(${c}, '$.kv')`,
  exp: (c) => `json_extract(${c}, '$.exp')`,
  json: (p) => p,
  add: (c, p) => `json_set(${c}, '$.n', json_extract(${c}, '$.n') + ${p})`,
  n: (c) => `json_extract(${c}, '$.n')`,
};

const POSTGRES: Dialect = {
  table: "generation_mcp_ledger",
  prefix: "kv:",
  p: (n) => `$${n}`,
  text: (c) => `(${c}->>'kv')`,
  exp: (c) => `(${c}->>'exp')::bigint`,
  json: (p) => `${p}::jsonb`,
  add: (c, p) => `jsonb_set(${c}, '{n}', to_jsonb((${c}->>'n')::bigint + ${p}::bigint))`,
  n: (c) => `(${c}->>'n')::bigint`,
};

/** The keyed API over one SQL table of (key, JSON value) rows, as SQLite and PostgreSQL hold them. */
class SqlKeyed implements KeyedStore {
  private readonly q: SqlQuery;
  private readonly w: SqlQuery;
  private readonly lazyW: SqlQuery;

  constructor(
    access: SqlAccess,
    private readonly d: Dialect,
    private readonly now: () => number = Date.now,
  ) {
    this.q = access.read;
    this.w = access.write;
    this.lazyW = access.deferred ?? access.write;
  }

  #writer(o: Deferred | undefined): SqlQuery {
    return o?.deferred ? this.lazyW : this.w;
  }

  #row(value: string, ttlMs: number): string {
    const exp = this.now() + ttlMs;
    // A large value with nothing to escape (base64: the viewer's upload chunks) is spliced in as
    // it is: JSON.stringify would scan and copy 683 KiB per chunk for the same text.
    if (value.length > 4096 && PLAIN.test(value)) return `{"kv":"${value}","exp":${exp}}`;
    return JSON.stringify({ kv: value, exp });
  }

  async get(key: string): Promise<string | undefined> {
    const { d } = this;
    const rows = await this.q(
      `SELECT ${d.text("value")} AS v FROM ${d.table} WHERE key = ${d.p(1)} AND ${d.exp("value")} > ${d.p(2)}`,
      [d.prefix + key, this.now()],
    );
    const v = rows[0]?.v;
    return typeof v === "string" ? v : undefined;
  }

  async put(key: string, value: string, ttlMs: number, o?: Deferred): Promise<void> {
    const { d } = this;
    await this.#writer(o)(
      `INSERT INTO ${d.table}(key, value) VALUES (${d.p(1)}, ${d.json(d.p(2))})
       ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [d.prefix + key, this.#row(value, ttlMs)],
    );
  }

  async swap(
    key: string,
    expected: string | undefined,
    next: string,
    ttlMs: number,
    o?: Deferred,
  ): Promise<boolean> {
    const { d } = this;
    const now = this.now();
    const t = d.table;
    const w = this.#writer(o);
    const rows =
      expected === undefined
        ? await w(
            `INSERT INTO ${t}(key, value) VALUES (${d.p(1)}, ${d.json(d.p(2))})
             ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE ${d.exp(`${t}.value`)} <= ${d.p(3)}
             RETURNING key`,
            [d.prefix + key, this.#row(next, ttlMs), now],
          )
        : await w(
            `UPDATE ${t} SET value = ${d.json(d.p(1))}
             WHERE key = ${d.p(2)} AND ${d.text("value")} = ${d.p(3)} AND ${d.exp("value")} > ${d.p(4)}
             RETURNING key`,
            [this.#row(next, ttlMs), d.prefix + key, expected, now],
          );
    return rows.length === 1;
  }

  async count(key: string, points: number, windowMs: number): Promise<Counted> {
    const { d } = this;
    const now = this.now();
    const t = d.table;
    // One statement: a live counter is raised in place, an absent or expired one starts afresh.
    // Written without a sync of its own (on SQLite): a count lost in a crash of the machine only
    // lets a window start afresh, and every limited request no longer waits for a disk flush.
    const rows = await this.lazyW(
      `INSERT INTO ${t}(key, value) VALUES (${d.p(1)}, ${d.json(d.p(2))})
       ON CONFLICT (key) DO UPDATE SET value = CASE WHEN ${d.exp(`${t}.value`)} > ${d.p(3)}
         THEN ${d.add(`${t}.value`, d.p(4))} ELSE excluded.value END
       RETURNING ${d.n("value")} AS n, ${d.exp("value")} AS exp`,
      [d.prefix + key, JSON.stringify({ n: points, exp: now + windowMs }), now, points],
    );
    const row = rows[0];
    return { points: Number(row?.n), expiresAt: Number(row?.exp) };
  }

  async delete(key: string, o?: Deferred): Promise<void> {
    await this.#writer(o)(`DELETE FROM ${this.d.table} WHERE key = ${this.d.p(1)}`, [this.d.prefix + key]);
  }

  async sweep(now: number): Promise<number> {
    const { d } = this;
    // ':' + 1 = ';': the range is exactly the prefix.
    const rows = await this.w(
      `DELETE FROM ${d.table} WHERE key >= ${d.p(1)} AND key < ${d.p(2)} AND ${d.exp("value")} <= ${d.p(3)}
       RETURNING key`,
      [d.prefix, `${d.prefix.slice(0, -1)};`, now],
    );
    return rows.length;
  }
}

export const sqliteKeyed = (access: SqlAccess, now?: () => number): KeyedStore =>
  new SqlKeyed(access, SQLITE, now);
export const postgresKeyed = (q: SqlQuery, now?: () => number): KeyedStore =>
  new SqlKeyed({ read: q, write: q }, POSTGRES, now);
