/**
 * What names a request in the ledger: the key it runs under (by hash: the key itself is never
 * stored), its body (by hash) and its identity.
 */
import { createHash, randomBytes } from "node:crypto";
import { LIMITS } from "../config/service-limits.js";

const KEY_DOMAIN = "generation-mcp/ledger/api-key/v1\u0000";

/** sha256 of the key under a domain prefix, so the hash is useless anywhere else. */
export function hashKey(apiKey: string): string {
  return createHash("sha256").update(KEY_DOMAIN).update(apiKey, "utf8").digest("hex");
}

export function bodyHash(bytes: string): string {
  return createHash("sha256").update(bytes, "utf8").digest("hex");
}

/** A fresh identity: sortable by time, 64 random bits, within the service's pattern. */
export function newIdentity(now: number): string {
  const id = `gm-${now.toString(36)}-${randomBytes(8).toString("hex")}`;
  if (!LIMITS.idempotencyKeyPattern.test(id)) throw new Error(`generated identity ${id} is invalid`);
  return id;
}
