/**
 * Fake time for in-process tests whose code waits on timers (the poll schedule's 2 s reads, the
 * sandbox's task durations, previews' caps): the clock moves only while `drive` awaits a call, so
 * a wait of seconds takes milliseconds, and what the code under test times with timers (a poll
 * schedule against a task's duration) no longer depends on how loaded the machine is.
 * setImmediate stays real: `drive` uses it to let real I/O (SQLite, files) go on while the
 * clock moves in small steps.
 */
import { afterEach, beforeEach, vi } from "vitest";

export function useFakeTime(): void {
  vi.useFakeTimers({
    toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"],
  });
}

const realTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Fake milliseconds per idle event-loop turn while `drive` waits, at most. */
const STEP_MS = 10;
/** Fake time runs at most this many times faster than real time. */
const RATIO = 100;

/**
 * Real work in flight: file system requests, DNS, crypto jobs on the thread pool. An fsync can
 * take tens of real milliseconds, thousands of turns: fake time stands still meanwhile, or a
 * request's 60 s timeout would pass during one file write.
 */
const busy = (): boolean => process.getActiveResourcesInfo().some((r) => /Req|Job/.test(r));
const realMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/**
 * Settles `work` under fake time: while it is pending, the clock moves on each idle event-loop
 * turn (no real I/O in flight) by STEP_MS at most and never more than RATIO times the real time
 * that passed, so a wait of seconds on timers takes tens of real milliseconds, while work the
 * clock cannot see (a module loaded on first use, which vitest fetches from its main process)
 * gets ample fake time, not minutes of it. Under real timers it only awaits.
 */
export async function drive<T>(work: Promise<T>): Promise<T> {
  if (!vi.isFakeTimers()) return work;
  let done = false;
  const settled = work.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  let last = realMs();
  let owed = 0;
  while (!done) {
    await realTurn();
    const now = realMs();
    owed = Math.min(STEP_MS, owed + (now - last) * RATIO);
    last = now;
    if (done || busy() || owed < 1) continue;
    const step = Math.floor(owed);
    owed -= step;
    await vi.advanceTimersByTimeAsync(step);
  }
  await settled;
  return work;
}

/**
 * Fake time for each test of the file. Call it before the file's own `afterEach`, so that one
 * (closing what the test opened) still runs under fake time, and real timers come back last.
 */
export function fakeTimeEach(): void {
  beforeEach(useFakeTime);
  afterEach(() => {
    vi.useRealTimers();
  });
}
