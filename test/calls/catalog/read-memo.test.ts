/**
 * The shared read behind the model catalog and the voice completions (src/calls/catalog/read-memo.ts):
 * one read per key for a while, shared by callers meanwhile, never kept when it failed, and
 * bounded in time.
 */
import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";
import { readMemo } from "../../../src/calls/catalog/read-memo.js";

interface Key {
  name: string;
}

/** A read that counts its calls and answers after `ms`, or fails while `failing` is set. */
function counted(ms = 0) {
  const state = { calls: 0, failing: false, signals: [] as AbortSignal[] };
  const read = async (key: Key, signal: AbortSignal): Promise<string[]> => {
    state.calls++;
    state.signals.push(signal);
    await delay(ms, undefined, { signal });
    if (state.failing) throw new Error("service down");
    return [`${key.name}#${state.calls}`];
  };
  return { state, read };
}

describe("readMemo", () => {
  it("shares one read among callers during it and after it, per key", async () => {
    const { state, read } = counted(20);
    const memo = readMemo({ ttlMs: 60_000, timeoutMs: 1_000 }, read);
    const a: Key = { name: "a" };
    const b: Key = { name: "b" };
    const [first, second] = await Promise.all([memo(a), memo(a)]);
    expect(first).toEqual(["a#1"]);
    expect(second).toBe(first);
    expect(await memo(a)).toBe(first);
    expect(await memo(b)).toEqual(["b#2"]);
    expect(state.calls).toBe(2);
  });

  it("reads again once the answer's time is up", async () => {
    vi.useFakeTimers();
    try {
      const { state, read } = counted();
      const memo = readMemo({ ttlMs: 40, timeoutMs: 1_000, now: () => Date.now() }, read);
      const a: Key = { name: "a" };
      expect(await memo(a)).toEqual(["a#1"]);
      vi.advanceTimersByTime(30);
      expect(await memo(a)).toEqual(["a#1"]);
      vi.advanceTimersByTime(50);
      expect(await memo(a)).toEqual(["a#2"]);
      expect(state.calls).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps no failed read: the next call reads again", async () => {
    const { state, read } = counted();
    const memo = readMemo({ ttlMs: 60_000, timeoutMs: 1_000 }, read);
    const a: Key = { name: "a" };
    state.failing = true;
    await expect(memo(a)).rejects.toThrow("service down");
    state.failing = false;
    expect(await memo(a)).toEqual(["a#2"]);
    expect(await memo(a)).toEqual(["a#2"]);
  });

  it("bounds a read by timeoutMs, aborting the read's signal, and keeps nothing", async () => {
    const { state, read } = counted(5_000);
    const memo = readMemo({ ttlMs: 60_000, timeoutMs: 50 }, read);
    const started = Date.now();
    await expect(memo({ name: "slow" })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(state.signals[0]?.aborted).toBe(true);
  });
});
