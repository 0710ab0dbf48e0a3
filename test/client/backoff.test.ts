/**
 * The one retry-timing module: full jitter, Retry-After (seconds or HTTP date) with a cap,
 * and an abortable sleep, as used by the client's read retries and the ledger's replays.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { fullJitter, parseRetryAfter, retryDelay, sleep } from "../../src/client/backoff.js";

const B = { baseMs: 500, capMs: 8_000, retryAfterCapMs: 30_000 };
const almostOne = () => 0.999999;

describe("fullJitter", () => {
  it("draws from [0, min(cap, base * 2^n))", () => {
    expect(fullJitter(0, B, () => 0)).toBe(0);
    expect(fullJitter(0, B, almostOne)).toBeCloseTo(500, 0);
    expect(fullJitter(3, B, almostOne)).toBeCloseTo(4_000, 0);
    expect(fullJitter(30, B, almostOne)).toBeCloseTo(8_000, 0);
    expect(fullJitter(2, B, () => 0.25)).toBe(500);
  });
});

describe("retryDelay", () => {
  it("is the jittered wait when the service gave no Retry-After", () => {
    expect(retryDelay(1, B, () => 0.5)).toEqual({ ms: 500, cut: false });
  });

  it("honours a Retry-After, never waiting less than the jittered wait", () => {
    expect(retryDelay(0, B, () => 0, 3_000)).toEqual({ ms: 3_000, cut: false });
    expect(retryDelay(4, B, almostOne, 10)).toMatchObject({ cut: false });
    expect(retryDelay(4, B, almostOne, 10).ms).toBeCloseTo(8_000, 0);
  });

  it("cuts a Retry-After beyond its cap and says so", () => {
    expect(retryDelay(0, B, () => 0, 120_000)).toEqual({ ms: 30_000, cut: true });
  });

  it("ignores a negative or missing hint", () => {
    expect(retryDelay(0, B, () => 0, -5)).toEqual({ ms: 0, cut: false });
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-11-23T06:00:00Z");
  it("reads delta seconds", () => {
    expect(parseRetryAfter("7", now)).toBe(7_000);
    expect(parseRetryAfter(" 1.5 ", now)).toBe(1_500);
  });
  it("reads an HTTP date, and a date in the past as no wait", () => {
    expect(parseRetryAfter("Mon, 23 Nov 2026 06:00:20 GMT", now)).toBe(20_000);
    expect(parseRetryAfter("Mon, 23 Nov 2026 05:59:00 GMT", now)).toBe(0);
  });
  it("gives nothing for an absent or unreadable header", () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter("", now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
  });
});

describe("sleep", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("waits the time asked", async () => {
    vi.useFakeTimers();
    let done = false;
    void sleep(40).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(39);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
  });

  it("rejects with the abort reason as soon as the signal aborts", async () => {
    vi.useFakeTimers();
    const ac = new AbortController();
    const slept = sleep(10_000, ac.signal);
    const outcome = expect(slept).rejects.toThrow("stop now");
    await vi.advanceTimersByTimeAsync(20);
    ac.abort(new Error("stop now"));
    await outcome;
    // No timer is left behind by the aborted wait.
    expect(vi.getTimerCount()).toBe(0);
    await expect(sleep(10, ac.signal)).rejects.toThrow("stop now");
  });
});
