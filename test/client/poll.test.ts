/**
 * waitForTask under fake timers: polls at about 2, 4, 8, then every 15 s (jitter within
 * ±20%), never past the deadline; a deadline that passes returns the task as it stands;
 * an abort returns the last task seen; progress is reported at each poll.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { pollDelayMs, waitForTask } from "../../src/client/poll.js";
import type { Task } from "../../src/client/schemas.js";
import { ServiceUnavailableError } from "../../src/client/service-errors.js";
import { task } from "./client-helpers.js";

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(0);
});
afterEach(() => {
  vi.useRealTimers();
});

/** A getTask that records when it was called and answers from `statuses` (last one repeats). */
function tasks(statuses: string[]) {
  const at: number[] = [];
  const get = vi.fn(async () => {
    at.push(Date.now());
    const status = statuses[Math.min(at.length - 1, statuses.length - 1)] ?? "queued";
    return task({ status }) as Task;
  });
  return { get, at };
}

describe("pollDelayMs", () => {
  it("follows 2, 4, 8, then 15 s, within ±20% jitter", () => {
    expect([0, 1, 2, 3, 4, 9].map((i) => pollDelayMs(i, () => 0.5))).toEqual([
      2000, 4000, 8000, 15000, 15000, 15000,
    ]);
    expect(pollDelayMs(0, () => 0)).toBe(1600);
    expect(pollDelayMs(3, () => 0.999999)).toBe(18000);
  });
});

describe("waitForTask", () => {
  it("polls on the schedule until the task is terminal", async () => {
    const { get, at } = tasks([
      "queued",
      "processing",
      "processing",
      "processing",
      "processing",
      "succeeded",
    ]);
    const progress: number[] = [];
    const p = waitForTask(get, {
      waitSeconds: 120,
      random: () => 0.5,
      onProgress: (x) => progress.push(x.polls),
    });
    await vi.advanceTimersByTimeAsync(120_000);
    const r = await p;
    expect(r).toMatchObject({ terminal: true, timedOut: false, task: { status: "succeeded" } });
    expect(at).toEqual([0, 2000, 6000, 14000, 29000, 44000]);
    expect(progress).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("spreads polls with jitter", async () => {
    const { get, at } = tasks(["queued", "queued", "queued", "succeeded"]);
    const p = waitForTask(get, { waitSeconds: 60, random: () => 0 });
    await vi.advanceTimersByTimeAsync(60_000);
    await p;
    expect(at).toEqual([0, 1600, 1600 + 3200, 1600 + 3200 + 6400]);
  });

  it("at the deadline returns the task as it stands, never polling past it", async () => {
    const { get, at } = tasks(["processing"]);
    const p = waitForTask(get, { waitSeconds: 10, random: () => 0.5 });
    await vi.advanceTimersByTimeAsync(30_000);
    const r = await p;
    expect(r).toMatchObject({ terminal: false, timedOut: true, task: { status: "processing" } });
    // 0, 2, 6, then the last wait is cut to the deadline (10 s) instead of 14 s.
    expect(at).toEqual([0, 2000, 6000, 10_000]);
    expect(Math.max(...at)).toBeLessThanOrEqual(10_000);
  });

  it("waitSeconds 0 reads once and returns", async () => {
    const { get, at } = tasks(["queued"]);
    const r = await waitForTask(get, { waitSeconds: 0 });
    expect(r).toMatchObject({ timedOut: true, terminal: false });
    expect(at).toEqual([0]);
  });

  it("an already terminal task returns at once", async () => {
    const { get } = tasks(["failed"]);
    expect(await waitForTask(get, { waitSeconds: 600 })).toMatchObject({ terminal: true, timedOut: false });
    expect(get).toHaveBeenCalledTimes(1);
  });

  it("an abort returns the last task seen", async () => {
    const { get } = tasks(["queued", "processing"]);
    const ctl = new AbortController();
    const p = waitForTask(get, { waitSeconds: 600, signal: ctl.signal, random: () => 0.5 });
    await vi.advanceTimersByTimeAsync(3000);
    ctl.abort();
    const r = await p;
    expect(r).toMatchObject({ terminal: false, timedOut: false, task: { status: "processing" } });
    expect(get).toHaveBeenCalledTimes(2);
  });

  it("an abort before any task is read throws", async () => {
    const ctl = new AbortController();
    ctl.abort();
    const get = vi.fn(async (signal?: AbortSignal) => {
      signal?.throwIfAborted();
      return task() as Task;
    });
    await expect(waitForTask(get, { waitSeconds: 10, signal: ctl.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
  });

  it("a transient read failure mid-wait keeps polling; a definitive one throws", async () => {
    let n = 0;
    const get = vi.fn(async () => {
      n++;
      if (n === 2) {
        throw new ServiceUnavailableError({
          status: 503,
          code: undefined,
          message: "busy",
          requestKind: "read",
        });
      }
      return task({ status: n >= 3 ? "succeeded" : "queued" }) as Task;
    });
    const p = waitForTask(get, { waitSeconds: 60, random: () => 0.5 });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await p).toMatchObject({ terminal: true });
    expect(get).toHaveBeenCalledTimes(3);

    const failing = vi.fn(async () => {
      throw new Error("definitive");
    });
    await expect(waitForTask(failing, { waitSeconds: 60 })).rejects.toThrow("definitive");
  });
});
