/**
 * A paid call handed back as an MCP task (docs/tasks.md). The call was checked, its spending
 * confirmed and its request claimed in the ledger (identity and bytes durable); from there the
 * same steps a synchronous call takes (send within a budget, wait for the service's task, present
 * it) run in the background of this process, and their result is stored on the task, exactly as
 * the tool would have answered.
 *
 * Nothing depends on this process staying up. The task's `context` says how to go on (the call
 * kind's own description of its request, the identity, the service's task once known), and a
 * lease says which process drives it; a `tasks/get` on any process that finds the lease lapsed
 * takes the work over (mcp-task-resume.ts): an uncertain send replays under the same identity, a known
 * service task is read again.
 */

import { randomUUID } from "node:crypto";
import type { EngineConfig } from "../../config/config-types.js";
import { serveLimits } from "../../config/serve-limits.js";
import { TASK_LEASE_MS, TASK_POLL, TASK_TTL_MS } from "../../config/time-limits.js";
import { IdentifiedError } from "../../ledger/ledger-errors.js";
import type { RunResult } from "../../ledger/open-ledger.js";
import type { Budget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import type { ToolOutcome } from "../../mcp/define-tool.js";
import type { CreateTaskResult } from "../../mcp/mcp-task-wire.js";
import { created2025, task2025 } from "../../mcp/mcp-task-wire-2025.js";
import { DeploymentShares } from "../../shared/deployment-shares.js";
import { LimitLog, once, type PoolRefusal, Shares, sourceOfKey } from "../../shared/fair-shares.js";
import { LocalRefusal } from "../../shared/local-refusals.js";
import { adopting, Job, jobs, OWNER } from "./mcp-task-job.js";
import { type Steps, type TaskContext, taskStore } from "./mcp-task-record.js";
import type { StoredTask } from "./mcp-task-store.js";

export type { Steps, Within } from "./mcp-task-record.js";

/** MCP tasks this process drives, per key, by the limits in force (one entry per configuration). */
const inFlight = new Map<string, Shares>();
/** What a call refused for the task share is told to wait: a slow task takes minutes. */
const TASK_RETRY_S = 60;
/** The operator's log of those refusals (stderr, scrubbed by the CLI), once a minute per key. */
const refusals = new LimitLog((line) => process.stderr.write(`generation-mcp: ${line}\n`));

function taskShares(config: EngineConfig): Shares {
  const { tasks, tasksPerKey } = serveLimits(config.serveLimits);
  const name = `${tasks}/${tasksPerKey}`;
  let pool = inFlight.get(name);
  if (pool === undefined) {
    pool = new Shares(tasks, tasksPerKey);
    inFlight.set(name, pool);
  }
  return pool;
}

/**
 * Each key's share counted on every process on the ledger's store together (one per ledger, so
 * every engine of a process shares it): N replicas drive for one key what one would.
 */
const everywhere = new WeakMap<object, Map<number, DeploymentShares>>();
const REPLICA = randomUUID();

function deploymentTasks(engine: Engine): DeploymentShares {
  const { ledger } = engine;
  const perOwner = serveLimits(engine.config.serveLimits).tasksPerKey;
  const byShare = everywhere.get(ledger) ?? new Map<number, DeploymentShares>();
  everywhere.set(ledger, byShare);
  let shares = byShare.get(perOwner);
  if (shares === undefined) {
    shares = new DeploymentShares(() => ledger.keyed(), {
      pool: "tasks",
      perOwner,
      replica: REPLICA,
      onStoreError: () =>
        refusals.note(
          "tasksPerKey",
          "the store",
          "counting MCP tasks on this process alone: the store did not answer",
        ),
    });
    byShare.set(perOwner, shares);
  }
  return shares;
}

/** The refusal of a task past a bound: nothing was sent or recorded. */
function tooManyTasks(refusal: PoolRefusal, where = ""): LocalRefusal {
  const limit = refusal.bound === "share" ? "tasksPerKey" : "tasks";
  const whose = refusal.bound === "share" ? `for this key${where}` : "on this server";
  return new LocalRefusal(
    "TOO_MANY_TASKS",
    `Too many MCP tasks in flight ${whose} (limit ${refusal.limit}, ${limit}); nothing was sent.`,
    `Wait for a task to finish (or cancel one) and retry after about ${TASK_RETRY_S} s.`,
  );
}

/**
 * Hands a claimed paid call back as a task, within the key's share of tasks in flight
 * (tasksPerKey; a call past it is refused before anything is sent): sends (the run starts here, with the task's own
 * signals, not the request's), and as soon as the ledger says the claim is durable, creates the
 * task and answers with it. A refusal before the claim is thrown, as in a synchronous call.
 * `form`: the task was asked for in the 2025-11-25 form (mcp-task-wire-2025.ts): listed for
 * `tasks/list`, and answered in that form's shape.
 */
export async function handBack<T>(
  engine: Engine,
  steps: Steps<T>,
  form?: "2025-11-25",
  notifyStatus?: (task: Record<string, unknown>) => void,
): Promise<ToolOutcome> {
  // The slot is claimed before the first await, so a burst of calls cannot overshoot the share.
  const pool = taskShares(engine.config);
  const refusal = pool.take(engine.keyHash);
  if (refusal !== undefined) {
    const limit = refusal.bound === "share" ? "tasksPerKey" : "tasks";
    refusals.note(
      limit,
      sourceOfKey(engine.keyHash),
      `refused an MCP task: ${limit} ${refusal.limit} reached`,
    );
    throw tooManyTasks(refusal);
  }
  const here = once(() => pool.give(engine.keyHash));
  const shared = deploymentTasks(engine);
  const elsewhere = await shared.claim(engine.keyHash).catch(() => undefined);
  if (elsewhere !== undefined) {
    here();
    refusals.note(
      "tasksPerKey",
      sourceOfKey(engine.keyHash),
      `refused an MCP task: tasksPerKey ${elsewhere.limit} reached on all replicas together`,
    );
    throw tooManyTasks(elsewhere, " on all replicas together");
  }
  const release = once(() => {
    here();
    void shared.release(engine.keyHash);
  });
  try {
    return await handOver(engine, steps, release, form, notifyStatus);
  } catch (err) {
    release();
    throw err;
  }
}

/** handBack past its claim: the task created and driven, `release` called when its work ends. */
async function handOver<T>(
  engine: Engine,
  steps: Steps<T>,
  release: () => void,
  form?: "2025-11-25",
  notifyStatus?: (task: Record<string, unknown>) => void,
): Promise<ToolOutcome> {
  const store = await taskStore(engine);
  const job = new Job(engine);
  if (notifyStatus !== undefined) {
    // The 2025-11-25 form's status notification, once the task ends (its only change of status).
    job.onEnded = (rec) => notifyStatus({ ...task2025(store.detailed(rec)) });
  }
  let onClaimed: (identity: string) => void = () => {};
  const claimed = new Promise<string>((resolve) => {
    onClaimed = resolve;
  });
  const running = steps.send(job.sendCtx, job.sendBudget, { onClaimed });
  running.catch(() => {});
  // Refused before the claim (a conflict, an unusable ledger): the call's own refusal, and no task.
  const identity = await Promise.race([claimed, running.then((r) => r.identity)]).catch((err: unknown) => {
    job.sendBudget.release();
    throw err;
  });
  let created: Awaited<ReturnType<typeof store.create>>;
  try {
    const context: TaskContext = { identity, work: steps.work };
    created = await store.create({
      principal: engine.keyHash,
      ttlMs: TASK_TTL_MS,
      context: context as unknown as Record<string, unknown>,
      statusMessage: `Sending the request (identity ${identity}).`,
      lease: { owner: OWNER, until: Date.now() + TASK_LEASE_MS },
      ...(form === undefined ? {} : { listed: true }),
    });
  } catch (err) {
    // No task to follow the work: stop it. The record stays open, so the identical call replays it.
    job.stop.abort(err);
    void running.catch(() => {}).finally(() => job.sendBudget.release());
    throw new IdentifiedError(err, identity, "sent");
  }
  job.onDone = release;
  job.drive(created.taskId, Date.parse(created.createdAt), steps, () => running);
  if (form !== undefined) return created2025(created) as unknown as ToolOutcome;
  const result: CreateTaskResult = { resultType: "task", ...created };
  return result as unknown as ToolOutcome;
}

/**
 * A call that asked for a task in the 2025-11-25 form but was answered before any claim (its
 * arguments refused, the user declined): a task already completed whose result is that answer, as
 * the SDK 1.x tasks client reads it (it refuses a plain result in answer to `params.task` with an
 * opaque -32603, hiding the message). Nothing was claimed or sent: no work, no lease.
 */
export async function settled2025(engine: Engine, outcome: ToolOutcome): Promise<ToolOutcome> {
  const store = await taskStore(engine);
  const created = await store.create({
    principal: engine.keyHash,
    ttlMs: TASK_TTL_MS,
    context: {},
    lease: { owner: OWNER, until: Date.now() + TASK_LEASE_MS },
    listed: true,
  });
  const result = outcome as unknown as Record<string, unknown>;
  const content = result.content as { type?: string; text?: string }[] | undefined;
  const text = content?.find((c) => c.type === "text")?.text ?? "";
  const done = await store.change(created.taskId, engine.keyHash, (cur) => {
    const next: StoredTask = {
      ...cur,
      status: "completed",
      result,
      statusMessage: text.split("\n")[0] ?? "",
    };
    delete next.lease;
    return next;
  });
  const answered = created2025(done === undefined ? created : store.detailed(done));
  // The answer itself says it too, for a client that reads the content of a CreateTaskResult.
  return { ...answered, content: [{ type: "text", text }] } as unknown as ToolOutcome;
}

/**
 * Takes over a task whose lease lapsed (its process stopped): the lease becomes this process's,
 * and its work goes on from where the store and the ledger say it stands.
 */
export async function adopt<T>(
  engine: Engine,
  rec: StoredTask,
  steps: Steps<T>,
  goOn: (job: { ctx: ToolContext; budget: Budget; signal: AbortSignal }) => Promise<RunResult<T>>,
): Promise<boolean> {
  // Two tasks/get at once in this process: one takes the lease, the other leaves it be.
  if (jobs.has(rec.taskId) || adopting.has(rec.taskId)) return false;
  adopting.add(rec.taskId);
  let taken: StoredTask | undefined;
  try {
    const store = await taskStore(engine);
    const now = Date.now();
    taken = await store.change(rec.taskId, engine.keyHash, (cur) => {
      if (cur.status !== "working" || (cur.lease !== undefined && cur.lease.until > now)) return undefined;
      cur.lease = { owner: OWNER, until: now + TASK_LEASE_MS };
      return cur;
    });
  } finally {
    adopting.delete(rec.taskId);
  }
  if (taken?.lease?.owner !== OWNER || jobs.has(rec.taskId)) return false;
  const job = new Job(engine);
  job.drive(rec.taskId, taken.createdAt, steps, () =>
    goOn({ ctx: job.sendCtx, budget: job.sendBudget, signal: job.stop.signal }),
  );
  return true;
}

/** Whether this process drives the task (its pollers may be held for its next read). */
export const drives = (taskId: string): boolean => jobs.has(taskId);

/**
 * Holds a `tasks/get` that came just before this process's next read of the service's task until
 * that read's outcome is stored (a new read scheduled, or the task finished), for at most
 * TASK_POLL.holdMs past the read: a poller arriving at `pollIntervalMs` sees the end at once.
 */
export async function beforeRead(taskId: string, keyHash: string): Promise<void> {
  const job = jobs.get(taskId);
  const at = job?.nextReadAt;
  // Another key's read is never held: it answers "not found" at once, as for an unknown task.
  if (job === undefined || at === undefined || job.keyHash !== keyHash) return;
  const untilRead = at - Date.now();
  if (untilRead > TASK_POLL.holdMs) return;
  await job.nextStep(Math.max(0, untilRead) + TASK_POLL.holdMs);
}

/** tasks/cancel reached this process: if it drives the task, its wait stops now. */
export function stopWaiting(taskId: string): void {
  jobs.get(taskId)?.cancel.abort();
}

/**
 * The process stops: every task it drives stops here and its lease is given up, so the next
 * `tasks/get` (here after a restart, or on another replica) takes the work over at once.
 */
export async function stopAll(): Promise<void> {
  await Promise.all([...jobs.values()].map((job) => job.release()));
}
