/**
 * The polling schedules under fake time. The learned one must never read closer than 2 s apart,
 * never have made more reads by any moment than the fixed 2/4/8/15 schedule, fall back to the
 * fixed one without history, and find a steady duration within a few runs.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { waitForTask } from "../../src/client/poll.js";
import type { Task } from "../../src/client/schemas.js";
import {
  type DurationSample,
  expectation,
  fixedReadMs,
  fixedSchedule,
  learnedSchedule,
  MIN_GAP_MS,
  plan,
} from "../../src/shared/poll-schedule.js";
import { task } from "../client/client-helpers.js";

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(0);
});
afterEach(() => {
  vi.useRealTimers();
});

/** A task that turns terminal `durationMs` after the wait began; records when it was read. */
function finishing(durationMs: number) {
  const at: number[] = [];
  const get = async () => {
    at.push(Date.now());
    return task({ status: Date.now() >= durationMs ? "succeeded" : "processing" }) as Task;
  };
  return { get, at };
}

/** Runs one wait under fake time to its end. */
async function waitOut(
  durationMs: number,
  schedule: ReturnType<typeof learnedSchedule> | undefined,
  waitSeconds = 600,
) {
  vi.setSystemTime(0);
  const { get, at } = finishing(durationMs);
  const p = waitForTask(get, {
    waitSeconds,
    schedule,
    random: () => 0.5,
    known: task({ status: "queued" }) as Task,
  });
  await vi.advanceTimersByTimeAsync(waitSeconds * 1000 + 1000);
  return { result: await p, at };
}

/** The rules, checked on the read times of one wait. */
function expectWithinRules(at: number[]) {
  at.forEach((t, n) => {
    expect(t, `read ${n} before the fixed schedule's read ${n}`).toBeGreaterThanOrEqual(fixedReadMs(n));
    // The wait begins just after the task was seen (submission or poll_task's read): 0 counts.
    const before = at[n - 1] ?? 0;
    expect(t - before, `read ${n} and the one before`).toBeGreaterThanOrEqual(MIN_GAP_MS);
  });
}

describe("fixed schedule", () => {
  it("reads at 0, 2, 6, 14, 29, 44 s", () => {
    expect([0, 1, 2, 3, 4, 5].map(fixedReadMs)).toEqual([0, 2000, 6000, 14_000, 29_000, 44_000]);
    const s = fixedSchedule(() => 0.5);
    expect(s.dueMs(0, undefined)).toBe(0);
    expect(s.dueMs(3, 6000)).toBe(14_000);
    expect(s.expected).toBeUndefined();
  });
});

describe("plan", () => {
  it("has nothing to say without history (the fixed schedule applies)", () => {
    expect(plan([])).toBeUndefined();
  });

  it("probes between the latest 'still running' and the earliest 'finished', then aims just past it", () => {
    // The fixed schedule saw a 3 s task running at 2 s and finished at 6 s: the probe goes 70% of
    // the way from 2 s to 6 s (a miss costs a 2 s wait, a hit only its distance past the finish).
    expect(plan([{ pendingMs: 2000, seenMs: 6000 }])?.aimMs).toBe(4800);
    // Then a read at 4 s found it finished, one at 3 s too, one at 2.95 s running and 4.95 s finished.
    const samples: DurationSample[] = [
      { pendingMs: 2950, seenMs: 4950 },
      { pendingMs: 0, seenMs: 3000 },
      { pendingMs: 0, seenMs: 4000 },
      { pendingMs: 2000, seenMs: 6000 },
    ];
    // 2.95 .. 3.0 s is not within 1% yet: probe between them, 70% of the way.
    expect(plan(samples)?.aimMs).toBe(2985);
    // A read at 2.99 s found it running: 2.99 .. 3.0 s is within 1%, so aim a margin past the
    // latest "still running" (1%, at least 30 ms).
    const tight = [{ pendingMs: 2990, seenMs: 4990 }, ...samples];
    expect(plan(tight)).toEqual({ aimMs: 3020, durationMs: 3000, runs: 5 });
    // A run that took a little longer (noise, under 5%) moves the aim past it, not to a guess.
    expect(plan([{ pendingMs: 3050, seenMs: 5050 }, ...samples])?.aimMs).toBe(3080);
    // 2.9 .. 3.0 s: probe between them.
    expect(plan([{ pendingMs: 2900, seenMs: 4900 }, ...samples.slice(1)])?.aimMs).toBe(2970);
  });

  it("with varying durations picks a first read that sees them soonest, not the slowest", () => {
    const samples: DurationSample[] = [50, 58, 62, 55, 60, 66, 57, 61].map((s) => ({
      pendingMs: (s - 1) * 1000,
      seenMs: (s + 1) * 1000,
    }));
    const p = plan(samples);
    expect(p?.aimMs).toBeGreaterThanOrEqual(50_000);
    expect(p?.aimMs).toBeLessThanOrEqual(62_000);
  });
});

describe("learned schedule", () => {
  it("reads first at the aim, skipping the immediate read of a task just submitted", async () => {
    const s = learnedSchedule({ aimMs: 3000, durationMs: 3000, runs: 12 }, 0);
    const { result, at } = await waitOut(2950, s);
    expect(at).toEqual([3000]);
    expect(result).toMatchObject({ terminal: true, polls: 1, terminalMs: 3000 });
  });

  it("a wait that began later (poll_task) counts the aim from the submission", async () => {
    const s = learnedSchedule({ aimMs: 60_000, durationMs: 60_000, runs: 5 }, 45_000);
    const { at } = await waitOut(14_000, s);
    expect(at[0]).toBe(15_000);
  });

  it("after a miss reads every 2 s while the fixed schedule's count allows, then as it allows", async () => {
    const s = learnedSchedule({ aimMs: 3000, durationMs: 3000, runs: 3 }, 0);
    const { at } = await waitOut(20_000, s);
    expect(at).toEqual([3000, 5000, 7000, 14_000, 29_000]);
    expectWithinRules(at);
  });

  it("never reads closer than 2 s, nor more often than the fixed schedule, whatever the history", async () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    for (let run = 0; run < 60; run++) {
      const samples: DurationSample[] = Array.from({ length: 1 + Math.floor(random() * 14) }, () => {
        const seenMs = Math.round(500 + random() * 120_000);
        return { pendingMs: Math.round(random() * seenMs * 0.9), seenMs };
      });
      const p = plan(samples);
      if (!p) continue;
      const since = random() < 0.3 ? Math.round(random() * 30_000) : 0;
      const durationMs = Math.round(random() * 150_000);
      const { at } = await waitOut(durationMs, learnedSchedule(p, since), 180);
      expectWithinRules(at);
      // And no more reads than the fixed schedule makes in the same wait.
      const fixed = await waitOut(durationMs, undefined, 180);
      const end = at[at.length - 1] ?? 0;
      expect(at.length).toBeLessThanOrEqual(fixed.at.filter((t) => t <= end).length || 1);
    }
  });

  it("at the deadline answers without a read that would break the 2 s rule", async () => {
    const s = learnedSchedule({ aimMs: 9000, durationMs: 9000, runs: 3 }, 0);
    const { result, at } = await waitOut(60_000, s, 10);
    expect(at).toEqual([9000]);
    expect(result).toMatchObject({ timedOut: true, terminal: false });
  });

  it("learns a steady duration within 14 runs and then sees it within 1% of it", async () => {
    const history: DurationSample[] = [];
    const delays: number[] = [];
    for (let run = 0; run < 20; run++) {
      const p = plan(history);
      const { result } = await waitOut(3000, p ? learnedSchedule(p, 0) : undefined, 60);
      delays.push((result.terminalMs ?? 0) - 3000);
      history.unshift({ pendingMs: result.pendingMs ?? 0, seenMs: result.terminalMs ?? 0 });
    }
    expect(delays[0]).toBe(3000); // the fixed schedule: seen at 6 s
    // Probes that miss cost a 2 s wait each while learning (two here); then every run is seen
    // within 30 ms (the margin) of its finish.
    expect(delays.filter((d) => d >= 2000).length, JSON.stringify(delays)).toBeLessThanOrEqual(2);
    expect(delays.slice(14), JSON.stringify(delays)).toEqual(delays.slice(14).map((d) => Math.min(d, 30)));
  });

  it("counts 'still running' from when that read was sent, 'finished' from when its answer came", async () => {
    vi.setSystemTime(0);
    // Every read takes 400 ms to answer; the service looks at the task as the read arrives.
    const get = async () => {
      const status = Date.now() >= 3000 ? "succeeded" : "processing";
      await new Promise((resolve) => setTimeout(resolve, 400));
      return task({ status }) as Task;
    };
    const p = waitForTask(get, {
      waitSeconds: 60,
      random: () => 0.5,
      known: task({ status: "queued" }) as Task,
    });
    await vi.advanceTimersByTimeAsync(61_000);
    // Reads sent at 0, 2.4 and 6.8 s: still running at 2.4 s (not 2.8 s), finished by 7.2 s.
    expect(await p).toMatchObject({ terminal: true, polls: 3, pendingMs: 2400, terminalMs: 7200 });
  });

  it("reports progress every 10 s of a long gap without reading the task", async () => {
    const s = learnedSchedule({ aimMs: 30_000, durationMs: 30_000, runs: 12 }, 0);
    const { get, at } = finishing(29_000);
    const waiting: number[] = [];
    const p = waitForTask(get, {
      waitSeconds: 60,
      schedule: s,
      known: task({ status: "queued" }) as Task,
      onWaiting: (x) => waiting.push(x.elapsedMs),
    });
    await vi.advanceTimersByTimeAsync(61_000);
    await p;
    expect(at).toEqual([30_000]);
    expect(waiting).toEqual([10_000, 20_000]);
  });

  it("says the expected time in progress messages", () => {
    const s = learnedSchedule({ aimMs: 50_000, durationMs: 52_000, runs: 12 }, 0);
    expect(expectation(s, 12_000)).toBe("about 40 s left, from the last 12 runs");
    expect(expectation(s, 60_000)).toBe("expected about now, from the last 12 runs");
    expect(expectation(fixedSchedule(), 1000)).toBeUndefined();
  });
});

describe("learned schedule with durations that vary", () => {
  /** Read times are what the schedules say (no fake timers needed): when is a task of `d` ms seen? */
  function seen(d: number, schedule: ReturnType<typeof learnedSchedule> | undefined) {
    let lastMs: number | undefined;
    let pendingMs = 0;
    for (let n = 0; ; n++) {
      const t = schedule ? schedule.dueMs(n, lastMs) : fixedReadMs(n);
      lastMs = t;
      if (t >= d) return { seenMs: t, pendingMs, reads: n + 1 };
      pendingMs = t;
    }
  }

  it.each([
    ["3 s, varying by 10%", (g: () => number) => 3000 * (1 + 0.1 * g())],
    ["8 s, varying by 25%", (g: () => number) => 8000 * (1 + 0.25 * g())],
    ["60 s, varying by 10%", (g: () => number) => 60_000 * (1 + 0.1 * g())],
    ["120 s, varying by 30%", (g: () => number) => 120_000 * (1 + 0.3 * g())],
    ["5 s or 30 s", (g: () => number) => (g() < 0.5 ? 5000 : 30_000)],
  ])("%s: no later than the fixed schedule (within 10%%), with no more reads", (_name, draw) => {
    let seed = 11;
    const uniform = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const gauss = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    const history: DurationSample[] = [];
    const fixed = { delay: 0, reads: 0 };
    const learned = { delay: 0, reads: 0 };
    for (let run = 0; run < 120; run++) {
      const d = Math.max(500, draw(gauss));
      const p = plan(history);
      const r = seen(d, p ? learnedSchedule(p, 0) : undefined);
      history.unshift({ pendingMs: r.pendingMs, seenMs: r.seenMs });
      if (run < 20) continue; // learning
      const f = seen(d, undefined);
      fixed.delay += f.seenMs - d;
      fixed.reads += f.reads;
      learned.delay += r.seenMs - d;
      learned.reads += r.reads;
    }
    expect(learned.delay).toBeLessThanOrEqual(fixed.delay * 1.1);
    expect(learned.reads).toBeLessThanOrEqual(fixed.reads);
  });
});
