/**
 * MCP tasks in the ledger's store (src/calls/mcp-task/mcp-task-store.ts) on all three back ends, with two stores
 * open as two replicas would have them: a task created through one is read through the other,
 * only under its own key hash; concurrent writers never overwrite each other; a task expires
 * with its ttlMs; a key's list (tasks/list, the 2025-11-25 form) holds its listed tasks only,
 * newest first, by pages, bounded. And `pollIntervalMs` as a pure function of the schedule.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TASK_INDEX_MAX, TaskIndex } from "../../../src/calls/mcp-task/mcp-task-index.js";
import {
  LedgerTaskStore,
  pollIntervalMs,
  type StoredTask,
} from "../../../src/calls/mcp-task/mcp-task-store.js";
import { TASK_POLL } from "../../../src/config/time-limits.js";
import { openStore } from "../../../src/ledger/open-ledger.js";
import type { LedgerStore } from "../../../src/ledger/store.js";
import { available, freshStore, STORE_KINDS, type StoreFixture } from "../../ledger/stores.js";

const ALICE = "a".repeat(64);
const BOB = "b".repeat(64);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe.each(STORE_KINDS)("MCP tasks on %s", (kind) => {
  let t: StoreFixture | undefined;
  let opened: LedgerStore[] = [];
  let one: LedgerTaskStore;
  let two: LedgerTaskStore;
  beforeEach(async (ctx) => {
    if (!(await available(kind))) return ctx.skip();
    t = await freshStore(kind);
    for (let i = 0; i < 2; i++) opened.push(await openStore(t.uri));
    const cancelledMessage = (rec: StoredTask) => `cancelled ${String(rec.context.identity)}`;
    one = new LedgerTaskStore((opened[0] as LedgerStore).keyed(), { cancelledMessage });
    two = new LedgerTaskStore((opened[1] as LedgerStore).keyed(), { cancelledMessage });
  });
  afterEach(async () => {
    await Promise.all(opened.map((s) => s.close()));
    opened = [];
    await t?.cleanup();
  });

  it("says another process takes over, not the stale status, while a stopped driver's lease runs out", async () => {
    const created = await one.create({
      principal: ALICE,
      ttlMs: 60_000,
      context: { identity: "gm-1" },
      statusMessage: "Waiting for task t (processing)",
      lease: { owner: "a stopped process", until: Date.now() + 6_000 },
    });
    const rec = (await one.read(created.taskId, ALICE)) as StoredTask;
    const stalled = one.detailed({ ...rec, nextReadAt: Date.now() - 10_000 });
    expect(stalled.statusMessage).toMatch(/stopped reporting; another takes the work over in about [56] s/);
    expect(stalled.statusMessage).toContain("nothing is sent or charged twice");
    expect(stalled.pollIntervalMs).toBeGreaterThanOrEqual(TASK_POLL.stalledMinMs);
    expect(one.detailed({ ...rec, nextReadAt: Date.now() + 3_000 }).statusMessage).toBe(
      "Waiting for task t (processing)",
    );
  });

  it("a task created through one replica is read through the other, only under its own key hash", async () => {
    const created = await one.create({ principal: ALICE, ttlMs: 60_000, context: { identity: "gm-1" } });
    expect(created.status).toBe("working");
    expect(created.taskId).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.createdAt).toMatch(ISO);
    expect(Number.isInteger(created.ttlMs)).toBe(true);
    expect(Number.isInteger(created.pollIntervalMs)).toBe(true);
    const read = await two.get(created.taskId, { principal: ALICE });
    expect(read?.taskId).toBe(created.taskId);
    expect(read?.status).toBe("working");
    // Another key finds nothing, exactly as for an ID that never existed.
    expect(await two.get(created.taskId, { principal: BOB })).toBeUndefined();
    expect(await two.get("no-such-task", { principal: ALICE })).toBeUndefined();
    expect(await two.cancel(created.taskId, { principal: BOB })).toBe(false);
    expect((await one.get(created.taskId, { principal: ALICE }))?.status).toBe("working");
  });

  it("concurrent writers through both replicas all land, none overwriting another", async () => {
    const { taskId } = await one.create({ principal: ALICE, ttlMs: 60_000, context: { marks: [] } });
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? one : two).change(taskId, ALICE, (cur) => {
          cur.context.marks = [...(cur.context.marks as number[]), i];
          return cur;
        }),
      ),
    );
    const rec = await one.read(taskId, ALICE);
    const marks = (rec?.context.marks ?? []) as number[];
    expect([...marks].sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
  });

  it("a cancel says what its owner says, and never moves a finished task", async () => {
    const a = await one.create({ principal: ALICE, ttlMs: 60_000, context: { identity: "gm-a" } });
    expect(await two.cancel(a.taskId, { principal: ALICE })).toBe(true);
    const cancelled = await one.get(a.taskId, { principal: ALICE });
    expect(cancelled?.status).toBe("cancelled");
    expect(cancelled?.statusMessage).toBe("cancelled gm-a");
    expect(cancelled).not.toHaveProperty("pollIntervalMs");

    const b = await one.create({ principal: ALICE, ttlMs: 60_000, context: {} });
    await one.change(b.taskId, ALICE, (cur) => ({ ...cur, status: "completed", result: { content: [] } }));
    expect(await two.cancel(b.taskId, { principal: ALICE })).toBe(true);
    const done = await two.get(b.taskId, { principal: ALICE });
    expect(done?.status).toBe("completed");
    expect(done?.result).toEqual({ content: [] });
  });

  it("lists a key's listed tasks only, newest first, by pages, through either replica", async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await (i % 2 ? one : two).create({
        principal: ALICE,
        ttlMs: 60_000,
        context: {},
        listed: true,
      });
      made.push(created.taskId);
    }
    await one.create({ principal: ALICE, ttlMs: 60_000, context: {} });
    await one.create({ principal: BOB, ttlMs: 60_000, context: {}, listed: true });
    const first = await two.list(ALICE, undefined, 2);
    expect(first?.tasks.map((t) => t.taskId)).toEqual([made[4], made[3]]);
    const second = await one.list(ALICE, first?.next, 2);
    expect(second?.tasks.map((t) => t.taskId)).toEqual([made[2], made[1]]);
    const last = await one.list(ALICE, second?.next, 2);
    expect(last).toEqual({ tasks: [expect.objectContaining({ taskId: made[0] })] });
    // Another key's cursor, or one never given, is no place in this key's list.
    expect(await one.list(ALICE, "no-such-task", 2)).toBeUndefined();
    expect((await one.list(BOB, undefined, 50))?.tasks).toHaveLength(1);
    expect(await one.list(BOB, made[0], 50)).toBeUndefined();
  });

  it("keeps a key's list bounded to its newest tasks, and drops the expired", async () => {
    const kv = (opened[0] as LedgerStore).keyed();
    const index = new TaskIndex(kv);
    const exp = Date.now() + 60_000;
    for (let i = 0; i <= TASK_INDEX_MAX; i++) await index.add(ALICE, `t${i}`, exp);
    const ids = await index.ids(ALICE);
    expect(ids).toHaveLength(TASK_INDEX_MAX);
    expect(ids[0]).toBe(`t${TASK_INDEX_MAX}`);
    expect(ids).not.toContain("t0");
    await index.add(BOB, "soon", Date.now() + 200);
    await index.add(BOB, "later", exp);
    await new Promise((r) => setTimeout(r, 300));
    expect(await index.ids(BOB)).toEqual(["later"]);
  });

  it("is gone once its ttlMs has passed", async () => {
    const { taskId } = await one.create({ principal: ALICE, ttlMs: 300, context: {} });
    expect(await two.read(taskId, ALICE)).toBeDefined();
    await new Promise((r) => setTimeout(r, 450));
    expect(await two.read(taskId, ALICE)).toBeUndefined();
    expect(await one.change(taskId, ALICE, (cur) => cur)).toBeUndefined();
  });
});

describe("pollIntervalMs", () => {
  const now = 1_000_000;
  const rec = (o: Partial<StoredTask>): StoredTask => ({
    v: 1,
    taskId: "t",
    principal: ALICE,
    status: "working",
    createdAt: now - 5_000,
    lastUpdatedAt: now,
    ttlMs: 60_000,
    context: {},
    ...o,
  });

  it("comes back just before the next read, and just after it once it is due", () => {
    expect(pollIntervalMs(rec({ nextReadAt: now + 3_000 }), now)).toBe(3_000 - TASK_POLL.leadMs);
    expect(pollIntervalMs(rec({ nextReadAt: now + 50 }), now)).toBe(50 + TASK_POLL.afterMs);
    expect(pollIntervalMs(rec({ nextReadAt: now + 60_000 }), now)).toBe(TASK_POLL.maxMs);
  });

  it("polls soon while nothing is scheduled, and waits for a stopped driver's lease to lapse", () => {
    expect(pollIntervalMs(rec({}), now)).toBe(TASK_POLL.unscheduledMs);
    const lease = { owner: "gone", until: now + 12_000 };
    expect(pollIntervalMs(rec({ nextReadAt: now - 10_000, lease }), now)).toBe(TASK_POLL.staleMs);
    const lapsing = { owner: "gone", until: now + 1_200 };
    expect(pollIntervalMs(rec({ nextReadAt: now - 10_000, lease: lapsing }), now)).toBe(1_200);
  });

  it("never asks for polls under a second while a stopped driver's lease runs out", () => {
    for (const left of [900, 300, 0, -500]) {
      const lease = { owner: "gone", until: now + left };
      expect(pollIntervalMs(rec({ nextReadAt: now - 10_000, lease }), now)).toBe(TASK_POLL.stalledMinMs);
      expect(pollIntervalMs(rec({ lastUpdatedAt: now - 10_000, lease }), now)).toBe(TASK_POLL.stalledMinMs);
    }
  });
});
