import { getEventListeners } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { limitSignal } from "../../src/client/deadline.js";
import { TimeoutError } from "../../src/client/service-errors.js";
import { DEFAULT_BUDGET_CAP_MS, GRACE_SECONDS } from "../../src/config/time-limits.js";
import { budgetOf, callBudget } from "../../src/mcp/budget.js";

describe("call budget", () => {
  it("is wait plus grace, and never past the cap when the wait is the default", () => {
    expect(callBudget(10, 45).totalMs).toBe((10 + GRACE_SECONDS) * 1000);
    expect(callBudget(undefined, 20).totalMs).toBe((20 + GRACE_SECONDS) * 1000);
    expect(callBudget(undefined, 600).totalMs).toBe(DEFAULT_BUDGET_CAP_MS);
    expect(DEFAULT_BUDGET_CAP_MS).toBeLessThanOrEqual(55_000);
  });

  it("aborts a submission with an uncertain TimeoutError before the end, keeping the caller's own abort", async () => {
    const budget = budgetOf(150);
    const signal = budget.signal(new AbortController().signal, 50);
    const started = Date.now();
    await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
    expect(Date.now() - started).toBeLessThan(140);
    expect(signal.reason).toBeInstanceOf(TimeoutError);
    expect(signal.reason).toMatchObject({ outcome: "uncertain", code: "TIMEOUT" });
    const caller = new AbortController();
    const mine = budgetOf(10_000).signal(caller.signal);
    caller.abort(new Error("cancelled"));
    expect(mine.reason).toMatchObject({ message: "cancelled" });
  });
});

describe("limits on a caller's signal", () => {
  it("leave no listener on it once released or fired", async () => {
    const caller = new AbortController();
    const listeners = () => getEventListeners(caller.signal, "abort").length;
    const budget = budgetOf(10_000);
    for (let i = 0; i < 20; i++) {
      budget.signal(caller.signal);
      budget.limit(caller.signal, 5_000);
      limitSignal(caller.signal, 5_000).release();
    }
    expect(listeners()).toBe(40);
    budget.release();
    expect(listeners()).toBe(0);
    const fired = limitSignal(caller.signal, 5);
    await new Promise((r) => fired.signal.addEventListener("abort", r, { once: true }));
    expect(fired.expired()).toBe(true);
    expect(listeners()).toBe(0);
  });

  it("abort with the caller's reason, and touch re-arms the time", () => {
    vi.useFakeTimers();
    try {
      const caller = new AbortController();
      const l = limitSignal(caller.signal, 60);
      vi.advanceTimersByTime(59);
      l.touch();
      vi.advanceTimersByTime(59);
      expect(l.signal.aborted).toBe(false);
      caller.abort(new Error("gone"));
      expect(l.signal.reason).toMatchObject({ message: "gone" });
      expect(l.expired()).toBe(false);
      // Untouched, the limit fires at its time, not before.
      const t = limitSignal(undefined, 60);
      vi.advanceTimersByTime(59);
      expect(t.signal.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      expect(t.expired()).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
