/**
 * Waiting for a task with the polling schedule learned from how long this key's recent tasks
 * of the same model took (the ledger's records), or the service's fixed guidance
 * (docs/service.md#polling) where the ledger has no history for the model. After the wait, what
 * it saw is written back, so the next task of that model is read closer to its finish.
 */
import { type WaitProgress, type WaitResult, waitForTask } from "../client/poll.js";
import { expectation, learnedSchedule, type PollSchedule, plan } from "../client/poll-schedule.js";
import type { Task } from "../client/schemas.js";
import { statusPredicate } from "../client/wording.js";
import type { Engine, ToolContext } from "../mcp/context.js";

/** "Task … is processing after 12 s; about 40 s left, from the last 12 runs". */
export function progressLine(p: WaitProgress): string {
  const expected = expectation(p.schedule, p.elapsedMs);
  return `Task ${p.task.id} ${statusPredicate(p.task.status)} after ${Math.round(p.elapsedMs / 1000)} s${expected ? `; ${expected}` : ""}`;
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
  const result = await waitForTask((signal) => engine.client.getTask(task.id, signal ? { signal } : {}), {
    waitSeconds: wait,
    signal,
    schedule,
    known: task,
    onProgress: (p) => void ctx.progress(progressLine(p), p.polls),
    onWaiting: (p) => void ctx.progress(progressLine(p)),
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
