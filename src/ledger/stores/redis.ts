/**
 * The ledger on Redis, shared by any number of server processes. Every key of one API key's
 * records carries its key hash as a hash tag (`gm:{<keyHash>}:…`), so in a Redis Cluster one key's
 * records, index entries and sets live on one slot and one Lua script may touch them together.
 * A claim reads what it needs, decides with the shared rules, then commits with a script that
 * writes only if nothing it read has changed (optimistic, like WATCH/MULTI, but one round trip);
 * a lost race decides again. Every later write is a compare-and-set script on the version.
 * The client is `@redis/client`, an optional peer dependency loaded only for redis:// URIs.
 * Commands fail at once while disconnected (no offline queue): an outage refuses the call, it is
 * never read as "no record".
 */
import type { RedisClientType } from "@redis/client";
import { LRUCache } from "lru-cache";
import type { Durability } from "../../config/store-uri.js";
import { lazy } from "../../shared/lazy.js";
import type { ChunkStore } from "../chunk-store.js";
import type { KeyedStore } from "../keyed-store.js";
import { LedgerError } from "../ledger-errors.js";
import type { StoredRecord } from "../record.js";
import {
  type ClaimRequest,
  type ClaimResult,
  decideClaim,
  type LedgerStore,
  type ListQuery,
  listPage,
  recordFrom,
} from "../store.js";
import { redisChunks } from "./chunks-redis.js";
import { redisKeyed } from "./keyed-redis.js";
import { optionalPeer } from "./optional-peer.js";

const KEYHASHES = "gm:keyhashes";
const ids = (keyHash: string): string => `gm:{${keyHash}}:ids`;
const idxs = (keyHash: string): string => `gm:{${keyHash}}:idxs`;
/** The ledger's portable keys (`rec:<keyHash>:…`, `idx:<keyHash>:…`) as hash-tagged Redis keys. */
function redisKey(key: string): string {
  const m = /^(rec|idx):([0-9a-f]{64}):(.*)$/s.exec(key);
  if (m === null) throw new LedgerError("LEDGER_CORRUPT", `unexpected ledger key ${key.slice(0, 80)}`);
  return `gm:{${m[2]}}:${m[1]}:${m[3]}`;
}
const MAX_CLAIM_TRIES = 16;

/**
 * KEYS: the n keys read (then the m keys written, then the ids and idxs sets). ARGV: n, the n
 * values read ('' = absent), m, the m values to write, then for each written key 1 if it is a record.
 */
const COMMIT = `
local n = tonumber(ARGV[1])
for i = 1, n do
  local cur = redis.call('GET', KEYS[i])
  local want = ARGV[1 + i]
  if want == '' then
    if cur then return 0 end
  elseif cur ~= want then
    return 0
  end
end
local m = tonumber(ARGV[n + 2])
local sets = n + m
for j = 1, m do
  local key = KEYS[n + j]
  redis.call('SET', key, ARGV[n + 2 + j])
  if ARGV[n + 2 + m + j] == '1' then
    redis.call('SADD', KEYS[sets + 1], key)
  else
    redis.call('SADD', KEYS[sets + 2], key)
  end
end
return 1`;

/** KEYS[1]: the record. ARGV: the version it must still have, the new value. */
const REPLACE = `
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
local v = cjson.decode(cur)['version'] or 0
if v ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

type Client = RedisClientType;
/** Key hashes remembered as listed; about 150 bytes each. */
const MAX_LISTED_MEMO = 10_000;

export class RedisStore implements LedgerStore {
  readonly description: string;
  readonly durabilityNote?: string;
  readonly #client: Client;
  /**
   * Key hashes this process recently listed in KEYHASHES: a memo saving the SADD, bounded (a miss
   * only adds again, which is idempotent), so made-up keys cannot grow the heap without end.
   */
  readonly #listed = new LRUCache<string, true>({ max: MAX_LISTED_MEMO });

  private constructor(client: Client, note: string | undefined) {
    this.#client = client;
    this.description = `redis (appendonly yes, appendfsync always, cross-process claims, keys hash-tagged by key hash)${note === undefined ? "" : `; ${note}`}`;
    if (note !== undefined) this.durabilityNote = note;
  }

  static async open(connection: string, durability: Durability): Promise<RedisStore> {
    const createClient = await loadRedis();
    let opened = false;
    const client = createClient({
      url: connection,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 5_000,
        socketTimeout: 10_000,
        // A store that cannot be reached at open is refused now; once open, reconnect forever (an
        // outage refuses calls meanwhile, since commands fail while disconnected).
        reconnectStrategy: (retries: number, cause: Error) =>
          opened ? Math.min(50 * 2 ** retries, 2_000) : cause,
      },
    }) as Client;
    // Errors reach the command that failed; the event only keeps a dropped socket from crashing.
    client.on("error", () => {});
    let note: string | undefined;
    try {
      await client.connect();
      opened = true;
      note = await checkDurability(client, durability);
      await client.set("gm:meta", JSON.stringify({ v: 1, schema: 1 }));
    } catch (cause) {
      try {
        client.destroy();
      } catch {}
      if (cause instanceof LedgerError) throw cause;
      throw new LedgerError("LEDGER_UNAVAILABLE", `cannot open the redis ledger: ${errText(cause)}`, {
        cause,
      });
    }
    return new RedisStore(client, note);
  }

  async get(keyHash: string, identity: string): Promise<StoredRecord | undefined> {
    const key = redisKey(`rec:${keyHash}:${identity}`);
    const raw = await this.#client.get(key);
    return raw === null ? undefined : recordFrom(raw, key);
  }

  async replace(prev: StoredRecord, next: StoredRecord): Promise<boolean> {
    const out = await this.#client.eval(REPLACE, {
      keys: [redisKey(`rec:${prev.keyHash}:${prev.identity}`)],
      arguments: [String(prev.version), JSON.stringify(next)],
    });
    return out === 1;
  }

  async claim(req: ClaimRequest): Promise<ClaimResult> {
    // Listed before the claim, so listAll and sweep find every key hash that has records.
    if (!this.#listed.has(req.keyHash)) {
      await this.#client.sAdd(KEYHASHES, req.keyHash);
      this.#listed.set(req.keyHash, true);
    }
    for (let i = 0; i < MAX_CLAIM_TRIES; i++) {
      const reads = new Map<string, string>();
      const writes = new Map<string, string>();
      const get = async (key: string): Promise<string | undefined> => {
        const k = redisKey(key);
        if (writes.has(k)) return writes.get(k);
        if (!reads.has(k)) reads.set(k, (await this.#client.get(k)) ?? "");
        const v = reads.get(k);
        return v === "" ? undefined : v;
      };
      const result = await decideClaim(
        {
          get: async (key) => {
            const raw = await get(key);
            return raw === undefined ? undefined : JSON.parse(raw);
          },
          insertIfAbsent: async (key, value) => {
            if ((await get(key)) !== undefined) return false;
            writes.set(redisKey(key), JSON.stringify(value));
            return true;
          },
          put: async (key, value) => {
            writes.set(redisKey(key), JSON.stringify(value));
          },
        },
        req,
      );
      if (writes.size === 0 || (await this.#commit(req.keyHash, reads, writes))) return result;
    }
    throw new LedgerError("LEDGER_RACE", "the claim kept losing races with other processes");
  }

  async #commit(keyHash: string, reads: Map<string, string>, writes: Map<string, string>): Promise<boolean> {
    const written = [...writes.keys()];
    const out = await this.#client.eval(COMMIT, {
      keys: [...reads.keys(), ...written, ids(keyHash), idxs(keyHash)],
      arguments: [
        String(reads.size),
        ...reads.values(),
        String(writes.size),
        ...writes.values(),
        ...written.map((k) => (k.includes("}:rec:") ? "1" : "0")),
      ],
    });
    return out === 1;
  }

  async list(keyHash: string): Promise<StoredRecord[]> {
    const keys = await this.#client.sMembers(ids(keyHash));
    if (keys.length === 0) return [];
    const values = await this.#client.mGet(keys);
    const out: StoredRecord[] = [];
    values.forEach((raw, i) => {
      if (raw !== null) out.push(recordFrom(raw, keys[i] ?? ""));
    });
    return out;
  }

  /** A page of one key's records: read by key hash alone, then ordered and cut here. */
  async listPage(q: ListQuery): Promise<StoredRecord[]> {
    return listPage(await this.list(q.keyHash), q);
  }

  async listAll(): Promise<StoredRecord[]> {
    const out: StoredRecord[] = [];
    for (const keyHash of await this.#client.sMembers(KEYHASHES)) out.push(...(await this.list(keyHash)));
    return out;
  }

  async sweep(now: number): Promise<number> {
    let removed = 0;
    for (const keyHash of await this.#client.sMembers(KEYHASHES)) {
      for (const rec of await this.list(keyHash)) {
        if (rec.expiresAt === undefined || rec.expiresAt > now) continue;
        const key = redisKey(`rec:${keyHash}:${rec.identity}`);
        // Deleted only if unchanged since read: a record resumed meanwhile stays.
        const gone = await this.#client.eval(
          "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]); redis.call('SREM', KEYS[2], KEYS[1]); return 1 end return 0",
          { keys: [key, ids(keyHash)], arguments: [(await this.#client.get(key)) ?? ""] },
        );
        if (gone === 1) removed++;
      }
      for (const idx of await this.#client.sMembers(idxs(keyHash))) {
        const raw = await this.#client.get(idx);
        const entry = raw === null ? undefined : (JSON.parse(raw) as { identity?: string });
        const target =
          entry?.identity === undefined ? undefined : redisKey(`rec:${keyHash}:${entry.identity}`);
        if (target !== undefined && (await this.#client.exists(target)) === 1) continue;
        await this.#client.eval(
          "if redis.call('EXISTS', KEYS[3]) == 0 then redis.call('DEL', KEYS[1]); redis.call('SREM', KEYS[2], KEYS[1]) end return 1",
          { keys: [idx, idxs(keyHash), target ?? idx], arguments: [] },
        );
      }
    }
    return removed;
  }

  keyed = (): KeyedStore => redisKeyed(this.#client);
  chunks = (): ChunkStore => redisChunks(this.#client);

  async close(): Promise<void> {
    await this.#client.close().catch(() => {
      try {
        this.#client.destroy();
      } catch {}
    });
  }
}

/**
 * A write is on disk before Redis answers only with the append-only file on and fsynced on every
 * write. Read with CONFIG GET; a server that forbids CONFIG cannot show it, so it is refused too.
 */
async function checkDurability(client: Client, durability: Durability): Promise<string | undefined> {
  let problem: string | undefined;
  try {
    const aof = (await client.configGet("appendonly")).appendonly;
    const fsync = (await client.configGet("appendfsync")).appendfsync;
    if (aof !== "yes") problem = `redis runs with appendonly ${aof ?? "unknown"}; it needs appendonly yes`;
    else if (fsync !== "always")
      problem = `redis runs with appendfsync ${fsync ?? "unknown"}; it needs appendfsync always`;
  } catch (cause) {
    problem = `redis does not answer CONFIG GET (${errText(cause)}), so its durability cannot be checked`;
  }
  if (problem === undefined) return undefined;
  if (durability === "relaxed")
    return `${problem}: a claim may be lost in a crash (accepted with durability=relaxed)`;
  throw new LedgerError(
    "LEDGER_NOT_DURABLE",
    `${problem}, so a claim could be lost in a crash and the request charged twice; configure it, or accept it with ?durability=relaxed`,
  );
}

const redisPackage = lazy(() => import("@redis/client"));
async function loadRedis(): Promise<(o: object) => unknown> {
  const mod = (await optionalPeer(redisPackage, "@redis/client", "redis")) as {
    createClient: (o: object) => unknown;
  };
  return mod.createClient;
}

/** The client's messages name the host and port, never the password. */
function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
