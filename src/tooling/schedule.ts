/**
 * The polling schedule for one wait on a task: learned from how long this key's recent tasks
 * of the same model took (the ledger's records), or the interface's fixed guidance where the
 * ledger has no history for the model. After the wait, what it saw is written back, so the
 * next task of that model is read closer to its finish.
 */

import type { WaitProgress, WaitResult } from "../service/poll.js";
import { expectation, learnedSchedule, type PollSchedule, plan } from "../service/schedule.js";
import type { Engine } from "./context.js";

export interface LearnedWait {
  /** Undefined: the fixed schedule. */
  schedule: PollSchedule | undefined;
  /** Records what the wait saw (in the background: the result does not wait for the write). */
  remember(result: WaitResult): void;
}

/** "Task … is processing after 12 s; about 40 s left, from the last 12 runs". */
export function progressLine(p: WaitProgress): string {
  const expected = expectation(p.schedule, p.elapsedMs);
  return `Task ${p.task.id} is ${p.task.status} after ${Math.round(p.elapsedMs / 1000)} s${expected ? `; ${expected}` : ""}`;
}

export async function learnedWait(engine: Engine, taskId: string): Promise<LearnedWait> {
  const started = Date.now();
  // History is an optimisation: a ledger that cannot be read leaves the fixed schedule.
  const origin = await engine.ledger.taskOrigin(engine.keyHash, taskId).catch(() => undefined);
  const model = origin?.model;
  const samples =
    model === undefined ? [] : await engine.ledger.durations(engine.keyHash, model).catch(() => []);
  const learned = plan(samples);
  const schedule =
    learned && origin ? learnedSchedule(learned, Math.max(0, started - origin.createdAt)) : undefined;
  return {
    schedule,
    remember(result) {
      if (!origin || !result.terminal || result.terminalMs === undefined) return;
      const seen = {
        pendingAt: started + (result.pendingMs ?? 0),
        terminalAt: started + result.terminalMs,
        status: result.task.status,
      };
      void engine.ledger.noteSeen(engine.keyHash, taskId, seen).catch(() => {});
    },
  };
}
