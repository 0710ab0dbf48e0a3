/**
 * Tokens checked lately (src/transports/oauth/token-checks.ts): served from memory only while their
 * last check started less than the bound ago, checked again in the background past half of it,
 * forgotten at once when this replica deletes a token, grant or account, never remembered when
 * the check failed; the store key of a token is its hash.
 */
import { describe, expect, it } from "vitest";
import { noticingRevocations, TokenChecks } from "../../src/transports/oauth/token-checks.js";

const BOUND = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A store of live tokens, counting its reads. */
function store() {
  const live = new Set(["t1", "t2"]);
  let reads = 0;
  const check = async (token: string) => {
    reads++;
    // The store is read first; the answer arrives a little later.
    const found = live.has(token);
    await sleep(5);
    if (!found) throw new Error("revoked");
    return { token };
  };
  return { live, check, reads: () => reads };
}

describe("TokenChecks", () => {
  it("serves a token checked less than the bound ago without reading the store", async () => {
    const s = store();
    const checks = new TokenChecks<{ token: string }>(BOUND);
    await Promise.all([checks.find("t1", s.check), checks.find("t1", s.check)]);
    for (let i = 0; i < 10; i++) expect(await checks.find("t1", s.check)).toEqual({ token: "t1" });
    expect(s.reads()).toBe(1);
  });

  it("refuses a token revoked elsewhere within the bound, and a busy token is rechecked before it", async () => {
    const s = store();
    const checks = new TokenChecks<{ token: string }>(BOUND);
    await checks.find("t1", s.check);
    // Used past half the bound: served, and checked again in the background.
    await sleep(BOUND / 2 + 20);
    await checks.find("t1", s.check);
    await sleep(20);
    expect(s.reads()).toBe(2);
    // Revoked in the store (another replica): refused once the last check is older than the bound.
    s.live.delete("t1");
    const revokedAt = Date.now();
    let refusedAfter = Number.POSITIVE_INFINITY;
    while (Date.now() - revokedAt < 3 * BOUND) {
      const ok = await checks.find("t1", s.check).then(
        () => true,
        () => false,
      );
      if (!ok) {
        refusedAfter = Date.now() - revokedAt;
        break;
      }
      await sleep(10);
    }
    expect(refusedAfter).toBeLessThanOrEqual(BOUND + 20);
    // A failed check is not remembered: each try reads the store.
    const before = s.reads();
    await expect(checks.find("t1", s.check)).rejects.toThrow("revoked");
    expect(s.reads()).toBe(before + 1);
  });

  it("forgets everything at once on a revocation here, even a check that read the store before it", async () => {
    const s = store();
    const checks = new TokenChecks<{ token: string }>(60_000);
    await checks.find("t2", s.check);
    const deleted: string[] = [];
    const kv = noticingRevocations(
      {
        get: async () => undefined,
        put: async () => {},
        swap: async () => true,
        count: async () => ({ points: 1, expiresAt: 0 }),
        sweep: async () => 0,
        delete: async (key) => {
          deleted.push(key);
        },
      },
      () => checks.forgetAll(),
    );
    // A check in flight when the grant goes: its answer is not remembered.
    const running = checks.find("t1", s.check);
    s.live.delete("t2");
    s.live.delete("t1");
    await kv.delete("oauth:Interaction:x");
    expect(await checks.find("t2", s.check)).toEqual({ token: "t2" });
    await kv.delete("oauth:Grant:abc");
    expect(await running).toEqual({ token: "t1" });
    await expect(checks.find("t2", s.check)).rejects.toThrow("revoked");
    await expect(checks.find("t1", s.check)).rejects.toThrow("revoked");
    expect(deleted).toEqual(["oauth:Interaction:x", "oauth:Grant:abc"]);
  });
});
