/**
 * The upload chunks beside the ledger (src/ledger/chunk-store.ts, stores/chunks-redis.ts) on all
 * three back ends, against real servers, with two stores open on one back end as two replicas have
 * them: bytes come back exactly (every byte value, not text), a resent chunk replaces its copy, an
 * upload's chunks go in one drop and no other upload's with them, and expired chunks are neither
 * read nor kept past a sweep.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChunkStore } from "../../src/ledger/chunk-store.js";
import { openStore } from "../../src/ledger/open-ledger.js";
import type { LedgerStore } from "../../src/ledger/store.js";
import { available, freshStore, STORE_KINDS, type StoreFixture } from "./stores.js";

/** Every byte value, then a long run: nothing a text encoding would keep as it is. */
const bytes = (n: number, salt: number) =>
  Buffer.from(Array.from({ length: n }, (_, i) => (i * 7 + salt) % 256));

describe.each(STORE_KINDS)("upload chunks on %s", (kind) => {
  let t: StoreFixture | undefined;
  let stores: LedgerStore[] = [];
  let a: ChunkStore;
  let b: ChunkStore;
  beforeEach(async (ctx) => {
    if (!(await available(kind))) return ctx.skip();
    t = await freshStore(kind);
    for (let i = 0; i < 2; i++) stores.push(await openStore(t.uri));
    a = (stores[0] as LedgerStore).chunks();
    b = (stores[1] as LedgerStore).chunks();
  });
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
    await t?.cleanup();
  });

  it("gives back the exact bytes on another replica, a resent chunk replacing its copy", async () => {
    const first = bytes(70_000, 1);
    await a.put("k:u1", 0, first, 60_000);
    await a.put("k:u1", 1, bytes(10, 2), 60_000);
    expect(Buffer.from((await b.get("k:u1", 0)) ?? [])).toEqual(first);
    await b.put("k:u1", 1, bytes(10, 3), 60_000);
    expect(Buffer.from((await a.get("k:u1", 1)) ?? [])).toEqual(bytes(10, 3));
    expect(await a.get("k:u1", 2)).toBeUndefined();
    expect(await a.get("k:u2", 0)).toBeUndefined();
  });

  it("drops every chunk of one upload and none of another's", async () => {
    for (let seq = 0; seq < 3; seq++) await a.put("k:u1", seq, bytes(100, seq), 60_000);
    await a.put("k:u2", 0, bytes(100, 9), 60_000);
    await b.drop("k:u1", 3);
    for (let seq = 0; seq < 3; seq++) expect(await a.get("k:u1", seq)).toBeUndefined();
    expect(Buffer.from((await a.get("k:u2", 0)) ?? [])).toEqual(bytes(100, 9));
  });

  it("reads no expired chunk, and a sweep removes what the store does not expire itself", async () => {
    await a.put("k:u1", 0, bytes(100, 1), 1);
    await a.put("k:u1", 1, bytes(100, 2), 60_000);
    await new Promise((r) => setTimeout(r, 20));
    expect(await b.get("k:u1", 0)).toBeUndefined();
    // Redis expires keys itself (its sweep has nothing to do); the SQL stores delete the one row.
    expect(await b.sweep(Date.now())).toBe(kind === "redis" ? 0 : 1);
    expect(Buffer.from((await a.get("k:u1", 1)) ?? [])).toEqual(bytes(100, 2));
  });
});
