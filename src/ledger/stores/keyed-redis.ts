/**
 * The keyed values of keyed-store.ts on Redis: plain string keys under `gm:kv:` with Redis's own
 * expiry (PX), put-if-absent as SET NX, compare-and-set as one Lua script. Single-key commands
 * only, so a Redis Cluster may place each key anywhere.
 */
import type { RedisClientType } from "@redis/client";
import type { Counted, KeyedStore } from "../keyed-store.js";

const PREFIX = "gm:kv:";

/** KEYS[1]: the key. ARGV: the value it must still hold, the new value, its TTL in ms. */
const SWAP = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

/**
 * KEYS[1]: the counter. ARGV: the points to add, the window in ms. A new counter (or one whose
 * expiry was lost) gets the window; the total and the ms left in it.
 */
const COUNT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  left = tonumber(ARGV[2])
end
return {n, left}`;

/** Redis refuses PX 0; a value that should already be gone lives one millisecond. */
const px = (ttlMs: number): number => Math.max(1, Math.ceil(ttlMs));

export function redisKeyed(client: RedisClientType): KeyedStore {
  return {
    async get(key) {
      return (await client.get(PREFIX + key)) ?? undefined;
    },
    async put(key, value, ttlMs) {
      await client.set(PREFIX + key, value, { expiration: { type: "PX", value: px(ttlMs) } });
    },
    async swap(key, expected, next, ttlMs) {
      if (expected === undefined) {
        const out = await client.set(PREFIX + key, next, {
          condition: "NX",
          expiration: { type: "PX", value: px(ttlMs) },
        });
        return out === "OK";
      }
      const out = await client.eval(SWAP, {
        keys: [PREFIX + key],
        arguments: [expected, next, String(px(ttlMs))],
      });
      return out === 1;
    },
    async count(key, points, windowMs): Promise<Counted> {
      const out = (await client.eval(COUNT, {
        keys: [PREFIX + key],
        arguments: [String(points), String(px(windowMs))],
      })) as [number, number];
      return { points: Number(out[0]), expiresAt: Date.now() + Number(out[1]) };
    },
    async delete(key) {
      await client.del(PREFIX + key);
    },
    // Redis expires keys itself.
    sweep: async () => 0,
  };
}
