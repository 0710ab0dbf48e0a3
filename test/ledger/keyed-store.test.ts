/**
 * The keyed values beside the ledger (src/ledger/keyed-store.ts, keyed-redis.ts) on all three back ends,
 * against real servers, with two stores open on one back end as two replicas would have them:
 * put-if-absent, compare-and-set and counters decided once however many race, expiry, and no meeting with
 * the ledger's own records.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hashKey, type KeyedStore, openLedger, openStore } from "../../src/ledger/open-ledger.js";
import type { LedgerStore } from "../../src/ledger/store.js";
import { API_KEY } from "./ledger-helpers.js";
import { available, freshStore, STORE_KINDS, type StoreFixture } from "./stores.js";

describe.each(STORE_KINDS)("keyed values on %s", (kind) => {
  let t: StoreFixture | undefined;
  let stores: LedgerStore[] = [];
  let a: KeyedStore;
  let b: KeyedStore;
  beforeEach(async (ctx) => {
    if (!(await available(kind))) return ctx.skip();
    t = await freshStore(kind);
    for (let i = 0; i < 2; i++) stores.push(await openStore(t.uri));
    a = (stores[0] as LedgerStore).keyed();
    b = (stores[1] as LedgerStore).keyed();
  });
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
    await t?.cleanup();
  });

  it("put, get and delete are seen by another process's store", async () => {
    expect(await b.get("k1")).toBeUndefined();
    await a.put("k1", "one", 60_000);
    expect(await b.get("k1")).toBe("one");
    await b.put("k1", "two", 60_000);
    expect(await a.get("k1")).toBe("two");
    await a.delete("k1");
    expect(await b.get("k1")).toBeUndefined();
  });

  it("put-if-absent: of twenty racing writers exactly one wins", async () => {
    const wins = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).swap("claim", undefined, `w${i}`, 60_000)),
    );
    expect(wins.filter(Boolean)).toHaveLength(1);
    const winner = wins.indexOf(true);
    expect(await a.get("claim")).toBe(`w${winner}`);
  });

  it("compare-and-set: only from the value read, once", async () => {
    await a.put("cas", "v1", 60_000);
    expect(await a.swap("cas", "v0", "x", 60_000)).toBe(false);
    const wins = await Promise.all([a.swap("cas", "v1", "va", 60_000), b.swap("cas", "v1", "vb", 60_000)]);
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect(await b.get("cas")).toBe(wins[0] ? "va" : "vb");
    // A value with quotes, backslashes and JSON inside compares exactly.
    const tricky = JSON.stringify({ a: 'x"y\\z', n: [1, 2] });
    await a.put("cas", tricky, 60_000);
    expect(await b.swap("cas", tricky, "done", 60_000)).toBe(true);
  });

  it("an expired value is absent: unreadable, claimable again, swept", async () => {
    await a.put("short", "gone soon", 30);
    await new Promise((r) => setTimeout(r, 80));
    expect(await b.get("short")).toBeUndefined();
    expect(await b.swap("short", "gone soon", "x", 60_000)).toBe(false);
    expect(await b.swap("short", undefined, "again", 60_000)).toBe(true);
    expect(await a.get("short")).toBe("again");
    await a.put("old", "x", 1);
    await new Promise((r) => setTimeout(r, 20));
    await a.sweep(Date.now());
    expect(await a.get("again")).toBeUndefined();
    expect(await a.get("short")).toBe("again");
  });

  it("count: racing adds from two stores all land in one window; an expired window starts again; swept", async () => {
    const adds = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).count("hits", 1, 60_000)),
    );
    expect(adds.map((c) => c.points).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    // One window (Redis reports the time left, read at slightly different moments).
    const ends = adds.map((c) => c.expiresAt);
    expect(Math.max(...ends) - Math.min(...ends)).toBeLessThan(1_000);
    expect(Math.min(...ends)).toBeGreaterThan(Date.now() + 55_000);
    expect((await a.count("hits", 5, 60_000)).points).toBe(45);
    const short = await a.count("brief", 3, 40);
    expect(short.points).toBe(3);
    await new Promise((r) => setTimeout(r, 80));
    const again = await b.count("brief", 2, 60_000);
    expect(again.points).toBe(2);
    expect(again.expiresAt).toBeGreaterThan(short.expiresAt + 50_000);
    await a.count("gone", 1, 1);
    await new Promise((r) => setTimeout(r, 20));
    await a.sweep(Date.now());
    expect((await a.count("gone", 1, 60_000)).points).toBe(1);
  });

  it("lives beside the ledger's records without touching them", async () => {
    const ledger = await openLedger({ storeUri: (t as StoreFixture).uri });
    try {
      const keyHash = hashKey(API_KEY);
      await (await ledger.keyed()).put(`rec:${keyHash}:x`, "not a record", 60_000);
      expect(await ledger.list(keyHash)).toEqual([]);
      await a.sweep(Date.now() + 3_600_000);
      expect(await ledger.list(keyHash)).toEqual([]);
    } finally {
      await ledger.close();
    }
  });
});
