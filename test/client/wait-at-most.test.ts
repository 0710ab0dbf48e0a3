/** waitAtMost: the one "wait for this, at most N ms" of the transports and the ledger's hand-overs. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { waitAtMost } from "../../src/client/deadline.js";

describe("waitAtMost", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("ends when the work does, and leaves no timer behind", async () => {
    let done = false;
    const waited = waitAtMost(Promise.resolve("x"), 1_000).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(true);
    await waited;
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ends after the limit when the work does not, and no sooner", async () => {
    let done = false;
    const waited = waitAtMost(new Promise(() => {}), 1_000).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
    await waited;
  });

  it("passes on the work's failure within the time, and clears its timer", async () => {
    await expect(waitAtMost(Promise.reject(new Error("broke")), 1_000)).rejects.toThrow("broke");
    expect(vi.getTimerCount()).toBe(0);
  });
});
