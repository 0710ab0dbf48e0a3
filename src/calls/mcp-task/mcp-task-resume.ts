/**
 * Taking over the work of an MCP task whose process stopped (a restart, a replica gone), on the
 * first `tasks/get` that finds its lease lapsed: the call kind's steps are rebuilt from the work
 * the task stored, and the request goes on from where the task and the ledger say it stands.
 *
 * - The service's task is known (the task recorded it, or the ledger's record has it): it is read
 *   again, never sent again.
 * - The request was refused for good (the ledger closed it): that refusal is the result, nothing is
 *   sent.
 * - Otherwise the outcome of the send is unknown: the stored bytes are replayed under the same
 *   identity, and the service returns the request it already has without dispatching or charging
 *   again (docs/idempotency.md, rules 2 and 3).
 */
import { errorFromResponse } from "../../client/service-errors.js";
import { IdentifiedError } from "../../ledger/ledger-errors.js";
import type { LedgerRecord, RunResult } from "../../ledger/open-ledger.js";
import { isRetainedCode } from "../../ledger/replay.js";
import type { Budget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import { adopt, type Steps } from "./mcp-task-background.js";
import { contextOf, type Resumable, type TaskContext } from "./mcp-task-record.js";
import type { StoredTask } from "./mcp-task-store.js";

/** Drives `rec`'s work from this process when its lease lapsed; false when another holds it. */
export async function takeOver(engine: Engine, rec: StoredTask, resumable: Resumable): Promise<boolean> {
  const context = contextOf(rec);
  const steps = await resumable(engine, context.work);
  return adopt(engine, rec, steps, (job) => goOn(engine, steps, context, job));
}

async function goOn<T>(
  engine: Engine,
  steps: Steps<T>,
  context: TaskContext,
  job: { ctx: ToolContext; budget: Budget; signal: AbortSignal },
): Promise<RunResult<T>> {
  const { identity, sent } = context;
  const record = await recordOf(engine, identity);
  const taskId = sent?.taskId ?? record?.taskId;
  if (taskId !== undefined && steps.known !== undefined) {
    return {
      identity,
      result: await steps.known(taskId, sent, job.signal),
      reused: sent?.reused ?? true,
      joined: sent?.joined ?? false,
      // A task's result is marked delivered when tasks/get carries it (src/calls/mcp-task/mcp-task-requests.ts).
      handOver: () => ({ settle: async () => {} }),
    };
  }
  const reason = record?.state === "closed" ? record.closedReason : undefined;
  if (reason !== undefined && !isRetainedCode(reason.code)) {
    const { status, code, message } = reason;
    const refusal = errorFromResponse({ status, code, message, requestKind: "submission" });
    throw new IdentifiedError(refusal, identity, "closed");
  }
  return steps.send(job.ctx, job.budget, { identity });
}

async function recordOf(engine: Engine, identity: string): Promise<LedgerRecord | undefined> {
  const [record] = await engine.ledger.list(engine.keyHash, { idempotencyKey: identity, state: "all" });
  return record;
}
