/**
 * Waiting for a task with the polling schedule learned from how long this key's recent tasks
 * of the same model took (the ledger's records), or the service's fixed guidance
 * (docs/service.md#polling) where the ledger has no history for the model. After the wait, what
 * it saw is written back, so the next task of that model is read closer to its finish.
 */
import { type WaitProgress, type WaitResult, waitForTask } from "../../client/poll.js";
import type { Task } from "../../client/schemas.js";
import { isTerminal } from "../../config/service-limits.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import { learnedSchedule, type PollSchedule, plan } from "../../shared/poll-schedule.js";
import { count as countOf, statusPredicate } from "../../shared/wording.js";

/**
 * The progress messages of one wait, each saying something new. The task's age counts from its
 * submission when the ledger knows it (a poll_task of a task submitted a minute ago says so), else
 * from the start of this wait; what the model's recent runs lead to expect is said while it is
 * ahead, "expected about now" once, then once that it takes longer, then nothing more about it
 * until the task ends. A message that would repeat the last one is not sent (undefined).
 */
export function progressReporter(sinceSubmitMs: number | undefined): (p: WaitProgress) => string | undefined {
  let overdue = 0;
  let last: string | undefined;
  return (p) => {
    const age = Math.round(((sinceSubmitMs ?? 0) + p.elapsedMs) / 1000);
    const when = sinceSubmitMs === undefined ? `after ${age} s of this wait` : `${age} s after submission`;
    let line = `Task ${p.task.id} ${statusPredicate(p.task.status)}, ${when}`;
    const e = p.schedule.expected;
    if (e !== undefined) {
      const runs = `the last ${countOf(e.runs, "run")}`;
      const left = Math.round((e.durationMs - e.sinceSubmitMs - p.elapsedMs) / 1000);
      if (isTerminal(p.task.status)) line += `; ${runs} took about ${Math.round(e.durationMs / 1000)} s`;
      else if (left > 0) line += `; about ${left} s left, from ${runs}`;
      else if (overdue++ === 0) line += `; expected about now, from ${runs}`;
      else if (overdue === 2)
        line += `; longer than ${runs} took (about ${Math.round(e.durationMs / 1000)} s)`;
    }
    if (line === last) return undefined;
    last = line;
    return line;
  };
}

/**
 * Waits up to `wait` seconds for `task` (as last seen), with progress, until `signal` (the call's,
 * capped by its budget) ends it; throws as waitForTask does.
 */
export async function waitLearning(
  engine: Engine,
  ctx: ToolContext,
  task: Task,
  wait: number,
  signal: AbortSignal,
): Promise<WaitResult> {
  const started = Date.now();
  // History is an optimisation: a ledger that cannot be read leaves the fixed schedule.
  const origin = await engine.ledger.taskOrigin(engine.keyHash, task.id).catch(() => undefined);
  const model = origin?.model;
  const samples =
    model === undefined ? [] : await engine.ledger.durations(engine.keyHash, model).catch(() => []);
  const learned = plan(samples);
  const schedule: PollSchedule | undefined =
    learned && origin ? learnedSchedule(learned, Math.max(0, started - origin.createdAt)) : undefined;
  const line = progressReporter(origin === undefined ? undefined : Math.max(0, started - origin.createdAt));
  const report = (p: WaitProgress, value?: number) => {
    const text = line(p);
    if (text !== undefined) void ctx.progress(text, value);
  };
  const result = await waitForTask((signal) => engine.client.getTask(task.id, signal ? { signal } : {}), {
    waitSeconds: wait,
    signal,
    schedule,
    known: task,
    onProgress: (p) => report(p, p.polls),
    onWaiting: (p) => report(p),
    onNextRead: ctx.scheduled,
  });
  if (origin && result.terminal && result.terminalMs !== undefined) {
    const seen = {
      pendingAt: started + (result.pendingMs ?? 0),
      terminalAt: started + result.terminalMs,
      status: result.task.status,
    };
    // In the background: the result does not wait for this write.
    void engine.ledger.noteSeen(engine.keyHash, task.id, seen).catch(() => {});
  }
  return result;
}
