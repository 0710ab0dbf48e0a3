/**
 * Waits for a task by polling with the interface's guidance: about 2, 4, 8, then every
 * 15 s, with jitter, never past the deadline. Running out of time is not an error: the
 * task is returned as it stands, so the caller keeps its ID and can poll again later.
 */

import { sleep } from "./backoff.js";
import type { ServiceError } from "./errors.js";
import { isTerminal, LIMITS } from "./limits.js";
import type { Task } from "./schemas.js";

export interface WaitOptions {
  waitSeconds: number;
  signal?: AbortSignal | undefined;
  onProgress?: ((p: { task: Task; polls: number; elapsedMs: number }) => void) | undefined;
  /** Source of jitter in [0, 1); tests pin it. */
  random?: (() => number) | undefined;
}

export interface WaitResult {
  task: Task;
  terminal: boolean;
  timedOut: boolean;
}

/** ±20% around the schedule: polls spread out without ever collapsing toward zero. */
const JITTER = 0.2;

export function pollDelayMs(pollIndex: number, random: () => number): number {
  const schedule = LIMITS.polling.scheduleSeconds;
  const base = (schedule[Math.min(pollIndex, schedule.length - 1)] ?? 15) * 1000;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

export async function waitForTask(
  getTask: (signal?: AbortSignal) => Promise<Task>,
  o: WaitOptions,
): Promise<WaitResult> {
  const random = o.random ?? Math.random;
  const started = Date.now();
  const deadline = started + Math.max(0, o.waitSeconds) * 1000;
  let task: Task | undefined;
  let polls = 0;
  let waits = 0;

  const aborted = () => o.signal?.aborted === true;
  const stop = (timedOut: boolean): WaitResult => {
    if (!task) throw o.signal?.reason ?? new Error("no task read");
    return { task, terminal: isTerminal(task.status), timedOut };
  };

  for (;;) {
    try {
      task = await getTask(o.signal);
      polls++;
      o.onProgress?.({ task, polls, elapsedMs: Date.now() - started });
    } catch (err) {
      if (aborted() && task) return stop(false);
      // A read that stayed unavailable (after the client's own retries) does not end a
      // wait that already knows its task: try again on the schedule until the deadline.
      if (!task || (err as ServiceError).outcome !== "retryable") throw err;
    }
    if (isTerminal(task.status)) return stop(false);
    const remaining = deadline - Date.now();
    if (remaining <= 0) return stop(true);
    try {
      await sleep(Math.min(pollDelayMs(waits++, random), remaining), o.signal);
    } catch (err) {
      if (aborted()) return stop(false);
      throw err;
    }
  }
}
