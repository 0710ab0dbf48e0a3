/**
 * What names a request in the ledger: the key it runs under (by hash: the key itself is never
 * stored), its body (by hash) and its identity.
 */
import { createHash, randomFillSync } from "node:crypto";
import { LIMITS } from "../config/service-limits.js";

const KEY_DOMAIN = "generation-mcp/ledger/api-key/v1\u0000";

/** sha256 of the key under a domain prefix, so the hash is useless anywhere else. */
export function hashKey(apiKey: string): string {
  return createHash("sha256").update(KEY_DOMAIN).update(apiKey, "utf8").digest("hex");
}

export function bodyHash(bytes: string): string {
  return createHash("sha256").update(bytes, "utf8").digest("hex");
}

/**
 * Random bytes drawn from the system's CSPRNG 2 KiB at a time and handed out 8 at a time, each
 * once: one draw per 256 identities instead of a call into the system per claim (a tenth of the
 * claim's own CPU, measured by bench (g)), as Node's randomUUID keeps its own cache.
 */
const POOL = Buffer.alloc(2048);
let poolAt = POOL.length;

function random64(): string {
  if (poolAt + 8 > POOL.length) {
    randomFillSync(POOL);
    poolAt = 0;
  }
  const hex = POOL.toString("hex", poolAt, poolAt + 8);
  // Each byte is given out once: wiped as it is used, so none lingers for a later reader.
  POOL.fill(0, poolAt, poolAt + 8);
  poolAt += 8;
  return hex;
}

/** A fresh identity: sortable by time, 64 random bits, within the service's pattern. */
export function newIdentity(now: number): string {
  const id = `gm-${now.toString(36)}-${random64()}`;
  if (!LIMITS.idempotencyKeyPattern.test(id)) throw new Error(`generated identity ${id} is invalid`);
  return id;
}
