/**
 * The upload chunks of chunk-store.ts on Redis: one string per chunk, written from its Buffer and
 * read back as one (a client view that maps bulk strings to Buffers), with Redis's own expiry.
 * An upload's chunks share a hash tag (`gm:chunk:{<upload>}:<seq>`), so one DEL removes them all,
 * on one slot of a Redis Cluster too.
 */
import type { RedisClientType } from "@redis/client";
import type { ChunkStore } from "../chunk-store.js";

/** RESP's bulk string type ('$'), as @redis/client's RESP_TYPES.BLOB_STRING names it. */
const BLOB_STRING = 36;
const key = (upload: string, seq: number) => `gm:chunk:{${upload}}:${seq}`;

export function redisChunks(client: RedisClientType): ChunkStore {
  const binary = client.withTypeMapping({ [BLOB_STRING]: Buffer });
  return {
    async put(upload, seq, bytes, ttlMs) {
      const value = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      await client.set(key(upload, seq), value, {
        expiration: { type: "PX", value: Math.max(1, Math.ceil(ttlMs)) },
      });
    },
    async get(upload, seq) {
      const out: unknown = await binary.get(key(upload, seq));
      return out instanceof Uint8Array ? out : undefined;
    },
    async drop(upload, count) {
      if (count < 1) return;
      await client.del(Array.from({ length: count }, (_, seq) => key(upload, seq)));
    },
    // Redis expires keys itself.
    sweep: async () => 0,
  };
}
