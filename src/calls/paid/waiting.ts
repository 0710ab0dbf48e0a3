/**
 * Waiting for a task inside a call's budget, with progress at each poll. The wait stops early
 * enough to present the task (and save it) before the budget ends; running out is not an error:
 * the task is returned as it stands, with its ID, for poll_task to pick up.
 */

import type { Task } from "../../client/schemas.js";
import { isTerminal } from "../../config/service-limits.js";
import { PRESENT_RESERVE_MS } from "../../config/time-limits.js";
import type { Budget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import { describeError } from "../../mcp/results.js";
import { waitLearning } from "./task-schedule.js";

/** Waits for a task within `wait` seconds and the budget, reporting progress. Never throws. */
export async function waitWithProgress(
  engine: Engine,
  ctx: ToolContext,
  task: Task,
  wait: number,
  budget: Budget,
): Promise<{ task: Task; note?: string }> {
  const room = budget.remainingMs() - PRESENT_RESERVE_MS;
  const waitMs = Math.min(wait * 1000, room);
  if (isTerminal(task.status) || waitMs <= 0) return noted(engine, { task });
  // Each read has its own timeout; this cap makes the whole wait end in time even when a read hangs.
  const cap = budget.limit(ctx.signal, room);
  try {
    // The schedule is learned from this key's earlier tasks of the same model where the ledger has them.
    const result = await waitLearning(engine, ctx, task, waitMs / 1000, cap.signal);
    return noted(engine, { task: result.task });
  } catch (err) {
    // The task exists and is paid for: a failed poll must not lose its ID.
    const why = cap.expired() ? "the service did not answer in time" : describeError(err).code;
    return noted(engine, { task, note: `Polling stopped early (${why}); the task was submitted.` });
  } finally {
    cap.release();
  }
}

/**
 * Keeps the status just read on the task's ledger record, so list_requests can say where an
 * accepted request's task stands. In the background: the answer does not wait for the write, and
 * a ledger that cannot take it loses only this note.
 */
function noted<T extends { task: Task }>(engine: Engine, out: T): T {
  const seen = { status: out.task.status, at: Date.now() };
  void engine.ledger.noteStatus(engine.keyHash, out.task.id, seen).catch(() => {});
  return out;
}
