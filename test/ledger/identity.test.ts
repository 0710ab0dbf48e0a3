/**
 * New identities (src/ledger/identity.ts): drawn from a pool of system random bytes, so across
 * refills of the pool none repeats, each has 64 bits in 16 hex digits, and each fits the
 * service's idempotency-key pattern.
 */
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/config/service-limits.js";
import { newIdentity } from "../../src/ledger/identity.js";

describe("newIdentity", () => {
  it("never repeats across many refills of its random pool, and always fits the service's pattern", () => {
    const now = Date.UTC(2026, 10, 29);
    const seen = new Set<string>();
    // 20,000 identities: 78 draws of the 2 KiB pool at 8 bytes each.
    for (let i = 0; i < 20_000; i++) seen.add(newIdentity(now));
    expect(seen.size).toBe(20_000);
    const tails = [...seen].map((id) => id.slice(id.lastIndexOf("-") + 1));
    for (const id of [...seen].slice(0, 300)) expect(LIMITS.idempotencyKeyPattern.test(id), id).toBe(true);
    expect(tails.every((t) => /^[0-9a-f]{16}$/.test(t))).toBe(true);
    // Random, not a counter: the digits are spread over all sixteen values at every position.
    for (let at = 0; at < 16; at++) expect(new Set(tails.map((t) => t[at])).size).toBe(16);
  });
});
