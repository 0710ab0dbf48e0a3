/**
 * Where ledger records live: any keyv back end, with the claim rules written once over a small
 * transaction interface. The SQLite store (sqlite.ts) runs that interface inside one
 * `BEGIN IMMEDIATE` transaction, which makes claims atomic across processes; other back ends
 * get in-process atomicity only (said in `description`).
 */
import type Keyv from "keyv";
import { isExpired, LedgerError, matchesState, parseRecord, type StoredRecord } from "./record.js";

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
  /** Whether an identical call may take over this record (contract Idempotency 3). */
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
  const create = async (
    identity: string,
    replaceExpired: boolean,
    index: boolean,
  ): Promise<StoredRecord | undefined> => {
    const rec = req.fresh(identity);
    const key = recordKey(req.keyHash, identity);
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
  /** A state name, or `open` (see matchesState). */
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
  get(keyHash: string, identity: string): Promise<StoredRecord | undefined>;
  put(rec: StoredRecord): Promise<void>;
  claim(req: ClaimRequest): Promise<ClaimResult>;
  /** Every record under one key hash (expired ones included; the ledger filters). */
  list(keyHash: string): Promise<StoredRecord[]>;
  /** One page of a key's live records, filtered and ordered by the store where it can. */
  listPage(q: ListQuery): Promise<StoredRecord[]>;
  listAll(): Promise<StoredRecord[]>;
  /** Deletes expired records and index entries left pointing at nothing. */
  sweep(now: number): Promise<number>;
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

/** Any keyv back end. Claims are serialized in this process; two processes could race. */
export class KeyvStore implements LedgerStore {
  readonly description: string;
  protected readonly keyv: Keyv;
  protected readonly queue = new SerialQueue();

  constructor(keyv: Keyv, description: string) {
    this.keyv = keyv;
    this.description = description;
  }

  protected tx(): ClaimTx {
    return {
      get: (key) => this.keyv.get(key),
      insertIfAbsent: async (key, value) => {
        if ((await this.keyv.get(key)) !== undefined) return false;
        await this.setOrThrow(key, value);
        return true;
      },
      put: (key, value) => this.setOrThrow(key, value),
    };
  }

  protected async setOrThrow(key: string, value: unknown): Promise<void> {
    if (!(await this.keyv.set(key, value)))
      throw new LedgerError("LEDGER_WRITE_FAILED", "the ledger refused a write");
  }

  /** A real write at startup: a store we cannot write refuses to open, not later mid-call. */
  probe(): Promise<void> {
    return this.queue.run(() => this.setOrThrow("meta", { v: 1, schema: 1 }));
  }

  async get(keyHash: string, identity: string): Promise<StoredRecord | undefined> {
    const key = recordKey(keyHash, identity);
    const raw = await this.queue.run(() => this.keyv.get(key));
    return raw === undefined ? undefined : parseRecord(raw, key);
  }

  put(rec: StoredRecord): Promise<void> {
    return this.queue.run(() => this.setOrThrow(recordKey(rec.keyHash, rec.identity), rec));
  }

  claim(req: ClaimRequest): Promise<ClaimResult> {
    return this.queue.run(() => decideClaim(this.tx(), req));
  }

  protected async entries(prefix: string): Promise<Array<[string, unknown]>> {
    const iterate = this.keyv.iterator as ((ns?: string) => AsyncGenerator<[string, unknown]>) | undefined;
    if (typeof iterate !== "function") {
      throw new LedgerError("LEDGER_UNSUPPORTED", `${this.description} cannot list its entries`);
    }
    const out: Array<[string, unknown]> = [];
    for await (const [key, value] of iterate.call(this.keyv, NAMESPACE)) {
      const bare = key.startsWith(`${NAMESPACE}:`) ? key.slice(NAMESPACE.length + 1) : key;
      if (bare.startsWith(prefix)) out.push([bare, value]);
    }
    return out;
  }

  async list(keyHash: string): Promise<StoredRecord[]> {
    const rows = await this.entries(`rec:${keyHash}:`);
    return rows.map(([key, value]) => parseRecord(value, key));
  }

  async listPage(q: ListQuery): Promise<StoredRecord[]> {
    return listPage(await this.list(q.keyHash), q);
  }

  async listAll(): Promise<StoredRecord[]> {
    const rows = await this.entries("rec:");
    return rows.map(([key, value]) => parseRecord(value, key));
  }

  async sweep(now: number): Promise<number> {
    let removed = 0;
    const live = new Set<string>();
    for (const rec of await this.listAll()) {
      const key = recordKey(rec.keyHash, rec.identity);
      if (isExpired(rec, now)) {
        await this.queue.run(() => this.keyv.delete(key));
        removed++;
      } else live.add(key);
    }
    for (const [key, value] of await this.entries("idx:")) {
      const e = value as IndexEntry;
      if (!live.has(recordKey(e.keyHash, e.identity))) await this.queue.run(() => this.keyv.delete(key));
    }
    return removed;
  }

  async close(): Promise<void> {
    await this.queue.run(() => this.keyv.disconnect());
  }
}
