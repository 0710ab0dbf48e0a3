/**
 * Each key's budget of new records and bytes per UTC day (src/ledger/day-budget.ts), counted in the
 * store, on every back end: past it a call is refused before its claim (nothing sent, nothing
 * stored) naming the limit and when it resets; another key, and the next day, are not affected; two
 * ledgers on one store (two replicas) share the count.
 */
import { describe, expect, it } from "vitest";
import { DayCounts } from "../../src/ledger/day-budget.js";
import type { KeyedStore } from "../../src/ledger/keyed-store.js";
import { hashKey, type Ledger, LedgerError } from "../../src/ledger/open-ledger.js";
import { nextStep } from "../../src/mcp/next-steps.js";
import { API_KEY, fastLedger, OTHER_KEY, scriptedSend } from "./ledger-helpers.js";
import { available, freshStore, STORE_KINDS } from "./stores.js";

const keyHash = hashKey(API_KEY);
const DAY = 24 * 60 * 60 * 1000;

/** The day's count is written after the claim, off the call's path: wait until it is there. */
async function settle(): Promise<void> {
  await new Promise((r) => setTimeout(r, 150));
}

async function call(ledger: Ledger, i: number, kh = keyHash, pad = 0) {
  const s = scriptedSend([{ taskId: `t${i}` }]);
  const bytes = JSON.stringify({ model: "m", prompt: `call ${i} ${"x".repeat(pad)}` });
  const out = await ledger.run(
    { keyHash: kh, tool: "generate_image", endpoint: "/api/generate/image", bytes },
    s.send,
    s.ref,
  );
  await settle();
  return { out, sent: s.calls.length };
}

for (const kind of STORE_KINDS) {
  describe(`the daily ledger budget on ${kind}`, () => {
    it("refuses the record past the key's budget before any send, shared by two ledgers on the store", async (ctx) => {
      if (!(await available(kind))) return ctx.skip();
      const t = await freshStore(kind);
      let now = Date.UTC(2026, 10, 28, 20, 0, 0);
      const opts = { dayBudget: { records: 3, bytes: 1_000_000 }, now: () => now };
      const a = await fastLedger(t.uri, opts);
      const b = await fastLedger(t.uri, opts);
      try {
        await call(a, 1);
        await call(b, 2);
        await call(a, 3);
        const s = scriptedSend([{ taskId: "t4" }]);
        const req = {
          keyHash,
          tool: "generate_image",
          endpoint: "/api/generate/image",
          bytes: '{"prompt":"4"}',
        };
        const err = await b.run(req, s.send, s.ref).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(LedgerError);
        expect(err).toMatchObject({ code: "LEDGER_DAY_BUDGET" });
        expect((err as Error).message).toMatch(
          /3 records today \(limit 3, ledgerRecordsPerKeyDay\).*nothing was sent/,
        );
        expect((err as LedgerError).action).toMatch(/Retry after 00:00 UTC \(in about 4 h\)/);
        expect(s.calls).toHaveLength(0);
        // The tool result's next step is the refusal's own (when it resets), not "check the store".
        expect(nextStep(err as LedgerError)).toBe((err as LedgerError).action);
        expect(await a.list(keyHash)).toHaveLength(3);
        // Another key has its own budget; the next day starts again.
        expect((await call(a, 5, hashKey(OTHER_KEY))).sent).toBe(1);
        now += DAY;
        expect((await call(b, 6)).sent).toBe(1);
      } finally {
        await a.close();
        await b.close();
        await t.cleanup();
      }
    });

    it("refuses a body that would pass the key's bytes for the day", async (ctx) => {
      if (!(await available(kind))) return ctx.skip();
      const t = await freshStore(kind);
      const ledger = await fastLedger(t.uri, { dayBudget: { records: 100, bytes: 10_000 } });
      try {
        expect((await call(ledger, 1, keyHash, 6_000)).sent).toBe(1);
        const err = await call(ledger, 2, keyHash, 6_000).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: "LEDGER_DAY_BUDGET" });
        expect((err as Error).message).toMatch(/ledgerMiBPerKeyDay/);
        expect((await call(ledger, 3, keyHash, 100)).sent).toBe(1);
      } finally {
        await ledger.close();
        await t.cleanup();
      }
    });

    it("writes the day's count once the send settled, never while the service's answer is on its way", async (ctx) => {
      if (!(await available(kind))) return ctx.skip();
      const t = await freshStore(kind);
      const now = Date.UTC(2026, 10, 28, 20, 0, 0);
      const ledger = await fastLedger(t.uri, {
        dayBudget: { records: 100, bytes: 1_000_000 },
        now: () => now,
      });
      const day = `day:${keyHash}:2026-11-28`;
      const kv = await ledger.keyed();
      const seen: Array<string | undefined> = [];
      const send = async () => {
        // The request is out; the answer takes a while: the count must not be written meanwhile.
        await new Promise((r) => setTimeout(r, 50));
        seen.push(await kv.get(day));
        return { taskId: "t1" };
      };
      try {
        const bytes = JSON.stringify({ model: "m", prompt: "one" });
        await ledger.run(
          { keyHash, tool: "generate_image", endpoint: "/api/generate/image", bytes },
          send,
          (r) => r,
        );
        expect(seen).toEqual([undefined]);
        await settle();
        expect(JSON.parse((await kv.get(day)) ?? "{}")).toEqual({ records: 1, bytes: bytes.length });
      } finally {
        await ledger.close();
        await t.cleanup();
      }
    });

    it("counts the calls of a burst in one write, and refuses past the budget before that write lands", async (ctx) => {
      if (!(await available(kind))) return ctx.skip();
      const t = await freshStore(kind);
      const now = Date.UTC(2026, 10, 28, 20, 0, 0);
      const ledger = await fastLedger(t.uri, { dayBudget: { records: 2, bytes: 1_000_000 }, now: () => now });
      const kv = await ledger.keyed();
      const s = scriptedSend([{ taskId: "t1" }, { taskId: "t2" }, { taskId: "t3" }]);
      const req = (prompt: string) => ({
        keyHash,
        tool: "generate_image",
        endpoint: "/api/generate/image",
        bytes: JSON.stringify({ model: "m", prompt }),
      });
      try {
        await ledger.run(req("one"), s.send, s.ref);
        await ledger.run(req("two"), s.send, s.ref);
        await new Promise((r) => setImmediate(r));
        // Both counted, neither written yet: the third is refused all the same.
        expect(await kv.get(`day:${keyHash}:2026-11-28`)).toBeUndefined();
        const err = await ledger.run(req("three"), s.send, s.ref).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: "LEDGER_DAY_BUDGET" });
        expect(s.calls).toHaveLength(2);
        await settle();
        expect(JSON.parse((await kv.get(`day:${keyHash}:2026-11-28`)) ?? "{}")).toMatchObject({ records: 2 });
      } finally {
        await ledger.close();
        await t.cleanup();
      }
    });

    it("writes the day's count of a call before the ledger closes, however soon after the call", async (ctx) => {
      if (!(await available(kind))) return ctx.skip();
      const t = await freshStore(kind);
      const opts = { dayBudget: { records: 1, bytes: 1_000_000 } };
      const first = await fastLedger(t.uri, opts);
      const s = scriptedSend([{ taskId: "t1" }, { taskId: "t2" }]);
      const req = (prompt: string) => ({
        keyHash,
        tool: "generate_image",
        endpoint: "/api/generate/image",
        bytes: JSON.stringify({ model: "m", prompt }),
      });
      await first.run(req("one"), s.send, s.ref);
      // Closed at once: the count, written off the call's path, still lands before the store closes.
      await first.close();
      const next = await fastLedger(t.uri, opts);
      try {
        const err = await next.run(req("two"), s.send, s.ref).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: "LEDGER_DAY_BUDGET" });
        expect(s.calls).toHaveLength(1);
      } finally {
        await next.close();
        await t.cleanup();
      }
    });
  });
}

describe("the day's counts not yet written", () => {
  it("still count while their write is on its way, and stop once it landed", async () => {
    let land = () => {};
    const landed = new Promise<void>((resolve) => {
      land = resolve;
    });
    const stored = new Map<string, string>();
    const kv = {
      get: async (key: string) => stored.get(key),
      swap: async (key: string, _expected: string | undefined, next: string) => {
        await landed;
        stored.set(key, next);
        return true;
      },
    } as unknown as KeyedStore;
    const counts = new DayCounts(() => kv);
    const now = Date.UTC(2026, 10, 28, 20, 0, 0);
    counts.add("kh", 10, now, Promise.resolve());
    // Past the 50 ms window: the write has started and waits.
    await new Promise((r) => setTimeout(r, 120));
    expect(counts.unwritten("kh", now)).toEqual({ records: 1, bytes: 10 });
    land();
    await counts.settled();
    expect(counts.unwritten("kh", now)).toEqual({ records: 0, bytes: 0 });
    expect(JSON.parse(stored.get("day:kh:2026-11-28") ?? "{}")).toEqual({ records: 1, bytes: 10 });
  });
});
