/**
 * Waits for a task by reading it on a schedule (poll-schedule.ts: the service's fixed guidance
 * by default, or one learned from the model's recent durations), never past the deadline.
 * Running out of time is not an error: the task is returned as it stands, so the caller keeps
 * its ID and can poll again later.
 */

import { isTerminal } from "../config/service-limits.js";
import { fixedSchedule, type PollSchedule } from "../shared/poll-schedule.js";
import { sleep } from "./backoff.js";
import type { Task } from "./schemas.js";
import type { ServiceError } from "./service-errors.js";

export { pollDelayMs } from "../shared/poll-schedule.js";

/** Longest silence between progress reports while waiting for the next read. */
export const HEARTBEAT_MS = 10_000;

export interface WaitProgress {
  task: Task;
  polls: number;
  elapsedMs: number;
  schedule: PollSchedule;
}

export interface WaitOptions {
  waitSeconds: number;
  signal?: AbortSignal | undefined;
  /** After each read. */
  onProgress?: ((p: WaitProgress) => void) | undefined;
  /** Every HEARTBEAT_MS of a longer gap between reads; `task` is the last one seen. */
  onWaiting?: ((p: WaitProgress) => void) | undefined;
  /** When the next read is due (epoch ms), each time one is scheduled: for those polling the waiter. */
  onNextRead?: ((atMs: number) => void) | undefined;
  /** Source of jitter in [0, 1) for the fixed schedule; tests pin it. */
  random?: (() => number) | undefined;
  /** When to read; the fixed guidance when absent. */
  schedule?: PollSchedule | undefined;
  /** The task as the caller last saw it (a fresh submission): returned if no read was made. */
  known?: Task | undefined;
}

export interface WaitResult {
  task: Task;
  terminal: boolean;
  timedOut: boolean;
  /**
   * Reads made, and when (ms after the wait began) the read was sent that last saw the task running,
   * and when the answer arrived that first saw it terminal: bounds on its finish either way.
   */
  polls: number;
  pendingMs?: number;
  terminalMs?: number;
}

export async function waitForTask(
  getTask: (signal?: AbortSignal) => Promise<Task>,
  o: WaitOptions,
): Promise<WaitResult> {
  const schedule = o.schedule ?? fixedSchedule(o.random ?? Math.random);
  const started = Date.now();
  const deadlineMs = Math.max(0, o.waitSeconds) * 1000;
  let task: Task | undefined = o.known;
  let polls = 0;
  let lastMs: number | undefined;
  let pendingMs: number | undefined;

  const aborted = () => o.signal?.aborted === true;
  const stop = (timedOut: boolean): WaitResult => {
    if (!task) throw o.signal?.reason ?? new Error("no task read");
    const r: WaitResult = { task, terminal: isTerminal(task.status), timedOut, polls };
    if (pendingMs !== undefined) r.pendingMs = pendingMs;
    if (r.terminal && lastMs !== undefined) r.terminalMs = lastMs;
    return r;
  };

  for (;;) {
    const due = schedule.dueMs(polls, lastMs);
    const elapsed = Date.now() - started;
    if (due > deadlineMs) {
      // The next read would come after the deadline: read once more at the deadline where the
      // schedule allows it, else answer with the task as it stands.
      if (task && (elapsed >= deadlineMs || schedule.earliestMs(polls, lastMs) > deadlineMs)) {
        return stop(true);
      }
    }
    const at = Math.min(due, deadlineMs);
    o.onNextRead?.(started + at);
    // A long gap between reads still reports progress (no request), so a host that keeps a call
    // alive on progress, or shows it, is not left in silence until the expected finish.
    for (let now = elapsed; at > now; now = Date.now() - started) {
      try {
        await sleep(Math.min(at - now, HEARTBEAT_MS), o.signal);
      } catch (err) {
        if (aborted() && task) return stop(false);
        throw err;
      }
      const after = Date.now() - started;
      if (task && after < at) o.onWaiting?.({ task, polls, elapsedMs: after, schedule });
    }
    try {
      // "Still running" holds from when the read was sent (the service looked at it after that):
      // counted from the answer, a slow round trip would make the task seem to run longer than it did.
      const sentMs = Date.now() - started;
      const read = await getTask(o.signal);
      lastMs = Date.now() - started;
      polls++;
      if (!isTerminal(read.status)) pendingMs = sentMs;
      task = read;
      o.onProgress?.({ task, polls, elapsedMs: lastMs, schedule });
    } catch (err) {
      if (aborted() && task) return stop(false);
      // A read that stayed unavailable (after the client's own retries) does not end a
      // wait that already knows its task: try again on the schedule until the deadline.
      if (!task || (err as ServiceError).outcome !== "retryable") throw err;
      lastMs = Date.now() - started;
      polls++;
    }
    if (isTerminal(task.status)) return stop(false);
    if (Date.now() - started >= deadlineMs) return stop(true);
  }
}
