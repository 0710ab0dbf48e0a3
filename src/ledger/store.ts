/**
 * Where ledger records live, behind one port with the atomic primitives the ledger needs:
 * a claim (insert-if-absent, decided by the rules below inside one atomic unit of the store),
 * compare-and-set on a record's version, get, list by key hash, sweep. SQLite (sqlite.ts),
 * PostgreSQL (postgres.ts) and Redis (redis.ts) each implement them with their own primitive, so
 * two processes racing on one request get one identity, and no write lands on a record another
 * process changed since it was read.
 */
import type { ChunkStore } from "./chunk-store.js";
import type { KeyedStore } from "./keyed-store.js";
import { LedgerError } from "./ledger-errors.js";
import type { StoredRecord } from "./record.js";
import { isExpired, matchesState, parseRecord } from "./record-rules.js";

export const NAMESPACE = "ledger";

export const recordKey = (keyHash: string, identity: string): string => `rec:${keyHash}:${identity}`;
export const indexKey = (keyHash: string, tool: string, bodyHash: string): string =>
  `idx:${keyHash}:${bodyHash}:${tool}`;

interface IndexEntry {
  keyHash: string;
  identity: string;
}

export interface ClaimRequest {
  keyHash: string;
  tool: string;
  bodyHash: string;
  /** The caller's `idempotencyKey`, when given. */
  identity?: string;
  now: number;
  newIdentity: () => string;
  /** A new record (state `prepared`) under the given identity. */
  fresh: (identity: string) => StoredRecord;
  /** Whether an identical call may take over this record (docs/idempotency.md#rules, 3). */
  reusable: (rec: StoredRecord) => boolean;
}

export type ClaimResult = { kind: "new" | "reused" | "conflict"; record: StoredRecord };

/** Key/value operations on unprefixed keys, all inside one atomic unit. */
export interface ClaimTx {
  get(key: string): Promise<unknown>;
  insertIfAbsent(key: string, value: unknown): Promise<boolean>;
  put(key: string, value: unknown): Promise<void>;
}

/** The claim rules: explicit keys replay or conflict; identical implicit calls reuse open records. */
export async function decideClaim(tx: ClaimTx, req: ClaimRequest): Promise<ClaimResult> {
  const idx = indexKey(req.keyHash, req.tool, req.bodyHash);
  const readRecord = async (identity: string): Promise<StoredRecord | undefined> => {
    const key = recordKey(req.keyHash, identity);
    const raw = await tx.get(key);
    return raw === undefined ? undefined : parseRecord(raw, key);
  };
  /** The open record an identical implicit call would take over, if any. */
  const reusableByIndex = async (): Promise<StoredRecord | undefined> => {
    const entry = (await tx.get(idx)) as IndexEntry | undefined;
    if (entry === undefined || typeof entry.identity !== "string") return undefined;
    const rec = await readRecord(entry.identity);
    const live =
      rec !== undefined &&
      !isExpired(rec, req.now) &&
      rec.tool === req.tool &&
      rec.bodyHash === req.bodyHash &&
      req.reusable(rec);
    return live ? rec : undefined;
  };
  let expiredVersion: number | undefined;
  const create = async (
    identity: string,
    replaceExpired: boolean,
    index: boolean,
  ): Promise<StoredRecord | undefined> => {
    const rec = req.fresh(identity);
    const key = recordKey(req.keyHash, identity);
    // Above the expired record's version, so a writer still holding that one cannot land on this.
    if (replaceExpired) rec.version = (expiredVersion ?? 0) + 1;
    if (replaceExpired) await tx.put(key, rec);
    else if (!(await tx.insertIfAbsent(key, rec))) return undefined;
    if (index) await tx.put(idx, { keyHash: req.keyHash, identity } satisfies IndexEntry);
    return rec;
  };

  if (req.identity !== undefined) {
    const existing = await readRecord(req.identity);
    if (existing !== undefined && !isExpired(existing, req.now)) {
      const same = existing.tool === req.tool && existing.bodyHash === req.bodyHash;
      return { kind: same ? "reused" : "conflict", record: existing };
    }
    // An explicit key is a new logical request by the caller's choice; it must not hide an open
    // implicit record with the same body from the identical calls that should resume it.
    const index = (await reusableByIndex()) === undefined;
    expiredVersion = existing?.version;
    const rec = await create(req.identity, existing !== undefined, index);
    if (rec === undefined) throw new LedgerError("LEDGER_RACE", "the ledger changed during a claim");
    return { kind: "new", record: rec };
  }

  const open = await reusableByIndex();
  if (open !== undefined) return { kind: "reused", record: open };
  // A random 64-bit suffix: a collision is all but impossible, but never overwrite one.
  for (let i = 0; i < 5; i++) {
    const rec = await create(req.newIdentity(), false, true);
    if (rec !== undefined) return { kind: "new", record: rec };
  }
  throw new LedgerError("LEDGER_RACE", "could not generate an unused identity");
}

/** One page of a key's records, newest first (createdAt, then identity, descending). */
export interface ListQuery {
  keyHash: string;
  /** Records expired at this time are left out. */
  now: number;
  /** A state name, `open` or `unfinished` (see matchesState). */
  state?: string;
  taskId?: string;
  limit: number;
  /** Only records after this one in that order (the last of the previous page). */
  after?: ListPosition;
}

export interface ListPosition {
  createdAt: number;
  identity: string;
}

/** The listing order, for stores that cannot sort in their own query language. */
export function listPage(rows: StoredRecord[], q: ListQuery): StoredRecord[] {
  const before = (r: StoredRecord, p: ListPosition) =>
    r.createdAt < p.createdAt || (r.createdAt === p.createdAt && r.identity < p.identity);
  return rows
    .filter(
      (r) =>
        r.keyHash === q.keyHash &&
        !isExpired(r, q.now) &&
        matchesState(r, q.state) &&
        (q.taskId === undefined || r.taskId === q.taskId) &&
        (q.after === undefined || before(r, q.after)),
    )
    .sort(
      (a, b) => b.createdAt - a.createdAt || (a.identity < b.identity ? 1 : a.identity > b.identity ? -1 : 0),
    )
    .slice(0, q.limit);
}

export interface LedgerStore {
  /** Back end and its guarantees, for diagnostics; never contains credentials. */
  readonly description: string;
  /** Set when the operator accepted a store weaker than "durable before the first byte". */
  readonly durabilityNote?: string;
  get(keyHash: string, identity: string): Promise<StoredRecord | undefined>;
  claim(req: ClaimRequest): Promise<ClaimResult>;
  /**
   * Compare-and-set: stores `next` only if the stored record is still `prev`'s version; false when
   * another writer got there first. Callers check the move with `checkAdvance` first. `deferred`:
   * the write may become durable with the store's next durable write instead of before it resolves
   * (SQLite commits it without a sync of its own; the others write as they are configured to). Only
   * for a change whose loss leaves a state that recovers the same way (writes.ts says which).
   */
  replace(prev: StoredRecord, next: StoredRecord, o?: { deferred?: boolean }): Promise<boolean>;
  /** Every record under one key hash (expired ones included; the ledger filters), read by key hash only. */
  list(keyHash: string): Promise<StoredRecord[]>;
  /** One page of a key's live records, filtered and ordered by the store where it can. */
  listPage(q: ListQuery): Promise<StoredRecord[]>;
  listAll(): Promise<StoredRecord[]>;
  /** Deletes expired records and index entries left pointing at nothing. */
  sweep(now: number): Promise<number>;
  /** Keyed values with expiry in the same store, shared by every process using it (keyed-store.ts). */
  keyed(): KeyedStore;
  /** Binary upload chunks in the same store, in a table of their own (chunk-store.ts). */
  chunks(): ChunkStore;
  close(): Promise<void>;
}

/** Runs async jobs one at a time, in order; a failed job does not stop the next. */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();
  run<T>(job: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(job, job);
    this.#tail = next.catch(() => undefined);
    return next;
  }
}

/** Reads a stored JSON text as a record, or throws: never "no record" for what cannot be read. */
export function recordFrom(text: unknown, where: string): StoredRecord {
  if (typeof text !== "string") return parseRecord(text, where);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new LedgerError("LEDGER_CORRUPT", `ledger entry ${where} is not valid JSON`, { cause });
  }
  return parseRecord(value, where);
}
