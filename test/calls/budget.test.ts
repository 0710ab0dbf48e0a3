import { describe, expect, it } from "vitest";
import { budgetOf, callBudget, DEFAULT_BUDGET_CAP_MS, GRACE_SECONDS } from "../../src/calls/budget.js";
import { TimeoutError } from "../../src/client/service-errors.js";

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
