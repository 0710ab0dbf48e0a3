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
 * takes the work over (resume.ts): an uncertain send replays under the same identity, a known
 * service task is read again.
 */
import { randomBytes } from "node:crypto";
import { scrubDeep } from "../client/scrub.js";
import {
  DEFAULT_BUDGET_CAP_MS,
  TASK_LEASE_MS,
  TASK_POLL,
  TASK_TTL_MS,
  TASK_WAIT_MS,
} from "../config/time-limits.js";
import type { RunResult } from "../ledger/open-ledger.js";
import { IdentifiedError } from "../ledger/record.js";
import { SerialQueue } from "../ledger/store.js";
import type { Engine, ToolContext } from "../mcp/context.js";
import type { ToolOutcome } from "../mcp/define-tool.js";
import { isTerminalTask, type StoredTask } from "../mcp/task-store.js";
import type { CreateTaskResult } from "../mcp/task-wire.js";
import { type Budget, budgetOf } from "./budget.js";
import { cancelledMessage, type SentFacts, type TaskContext, taskStore } from "./task-record.js";

/** Where the steps after the claim run: this call's context and budget, or a task's. */
export interface Within {
  ctx: ToolContext;
  budget: Budget;
  /** How long a wait for the service's task may last, in seconds. */
  waitSeconds: number;
}

/**
 * What follows the claim, for one call kind: built alike for a fresh call and for a task taken
 * over after a restart (resume.ts), from `work` alone.
 */
export interface Steps<T> {
  /** The call kind's own description of the request (JSON): all a task stores to rebuild these steps. */
  work: Record<string, unknown>;
  /**
   * Step 3: claims the identity (`identity`: this one, to go on with a claimed request) and sends
   * the bytes within `budget`; `onClaimed` once the claim is durable.
   */
  send(
    ctx: ToolContext,
    budget: Budget,
    o?: { identity?: string; onClaimed?: (identity: string) => void },
  ): Promise<RunResult<T>>;
  /** What a task records once sent: the service's task ID (media) and whether it was new work. */
  facts(result: T): Omit<SentFacts, "reused" | "joined">;
  /** Reads the service's task again instead of sending, where it is known (media only). */
  known?(taskId: string, sent: SentFacts | undefined, signal: AbortSignal): Promise<T>;
  /** Steps 4 and 5's result: wait (media) and present. */
  present(run: RunResult<T>, within: Within): Promise<ToolOutcome>;
  /** A failure after the claim, as the call's result (with the identity). */
  refuse(err: unknown): ToolOutcome;
}

/** This process, as the holder of a task's lease. */
const OWNER = `${process.pid}.${randomBytes(4).toString("hex")}`;
/** The tasks whose work this process drives. */
const jobs = new Map<string, Job>();

/**
 * Hands a claimed paid call back as a task: sends (the run starts here, with the task's own
 * signals, not the request's), and as soon as the ledger says the claim is durable, creates the
 * task and answers with it. A refusal before the claim is thrown, as in a synchronous call.
 */
export async function handBack<T>(engine: Engine, steps: Steps<T>): Promise<ToolOutcome> {
  const store = await taskStore(engine);
  const job = new Job(engine);
  let onClaimed: (identity: string) => void = () => {};
  const claimed = new Promise<string>((resolve) => {
    onClaimed = resolve;
  });
  const running = steps.send(job.sendCtx, job.sendBudget, { onClaimed });
  running.catch(() => {});
  const identity = await Promise.race([claimed, running.then((r) => r.identity)]);
  let created: Awaited<ReturnType<typeof store.create>>;
  try {
    const context: TaskContext = { identity, work: steps.work };
    created = await store.create({
      principal: engine.keyHash,
      ttlMs: TASK_TTL_MS,
      context: context as unknown as Record<string, unknown>,
      statusMessage: `Sending the request (identity ${identity}).`,
      lease: { owner: OWNER, until: Date.now() + TASK_LEASE_MS },
    });
  } catch (err) {
    // No task to follow the work: stop it. The record stays open, so the identical call replays it.
    job.stop.abort(err);
    throw new IdentifiedError(err, identity, "sent");
  }
  job.drive(created.taskId, Date.parse(created.createdAt), steps, () => running);
  const result: CreateTaskResult = { resultType: "task", ...created };
  return result as unknown as ToolOutcome;
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
  if (jobs.has(rec.taskId)) return false;
  const store = await taskStore(engine);
  const now = Date.now();
  const taken = await store.change(rec.taskId, engine.keyHash, (cur) => {
    if (cur.status !== "working" || (cur.lease !== undefined && cur.lease.until > now)) return undefined;
    cur.lease = { owner: OWNER, until: now + TASK_LEASE_MS };
    return cur;
  });
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
export async function beforeRead(taskId: string): Promise<void> {
  const job = jobs.get(taskId);
  const at = job?.nextReadAt;
  if (job === undefined || at === undefined) return;
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

class Job {
  /** The process stops, or the lease went to another: the work stops here and goes on elsewhere. */
  readonly stop = new AbortController();
  /** tasks/cancel: the wait stops (a send in flight finishes, so its task is known and named). */
  readonly cancel = new AbortController();
  readonly sendBudget = budgetOf(DEFAULT_BUDGET_CAP_MS);
  readonly sendCtx: ToolContext;
  nextReadAt: number | undefined;
  readonly #engine: Engine;
  readonly #writes = new SerialQueue();
  #taskId = "";
  #message: string | undefined;
  #dirty = false;
  /** tasks/get held for a read: each released by the first write it waits for (true). */
  #holds: ((stored: StoredTask | undefined) => boolean)[] = [];
  #renew: NodeJS.Timeout | undefined;

  constructor(engine: Engine) {
    this.#engine = engine;
    this.sendCtx = this.#context(this.stop.signal);
  }

  #context(signal: AbortSignal): ToolContext {
    return {
      signal,
      canElicit: false,
      offersRoots: false,
      inputResponses: undefined,
      progress: async (message) => this.#note({ message }),
      scheduled: (readAt) => this.#note({ readAt }),
      // Delivered is decided when a tasks/get carries the result (src/surface/tasks.ts).
      onDelivery: () => {},
    };
  }

  /** Runs the work of task `taskId` (created at `createdAt`, epoch ms) from `start` on. */
  drive<T>(taskId: string, createdAt: number, steps: Steps<T>, start: () => Promise<RunResult<T>>): void {
    this.#taskId = taskId;
    jobs.set(taskId, this);
    this.#renew = setInterval(() => this.#note({}), TASK_LEASE_MS / 3);
    this.#renew.unref();
    void this.#run(createdAt, steps, start).finally(() => {
      clearInterval(this.#renew);
      this.sendBudget.release();
      if (jobs.get(taskId) === this) jobs.delete(taskId);
      this.#release(undefined, true);
    });
  }

  async #run<T>(createdAt: number, steps: Steps<T>, start: () => Promise<RunResult<T>>): Promise<void> {
    let outcome: ToolOutcome;
    let deliverable = false;
    try {
      const run = await start();
      const sent: SentFacts = { reused: run.reused, joined: run.joined, ...steps.facts(run.result) };
      await this.#write((cur) => withContext(cur, { sent }));
      if (this.stop.signal.aborted || this.cancel.signal.aborted) return;
      const signal = AbortSignal.any([this.stop.signal, this.cancel.signal]);
      const ttlLeft = TASK_TTL_MS - (Date.now() - createdAt);
      const budget = budgetOf(Math.max(0, Math.min(TASK_WAIT_MS, ttlLeft - TASK_LEASE_MS)));
      try {
        const within = { ctx: this.#context(signal), budget, waitSeconds: budget.totalMs / 1000 };
        outcome = await steps.present(run, within);
        deliverable = true;
      } finally {
        budget.release();
      }
    } catch (err) {
      outcome = steps.refuse(err);
      // Cancelled while sending: the cancelled task says how sending ended (what it means for money).
      if (this.cancel.signal.aborted && !this.stop.signal.aborted) {
        const ended = firstLine(outcome as Record<string, unknown>) ?? "refused";
        await this.#write((cur) => withContext(cur, { ended })).catch(() => {});
        return;
      }
    }
    // Stopped or cancelled meanwhile: what was presented is the task as it stood, not its end.
    if (this.stop.signal.aborted || this.cancel.signal.aborted) return;
    const result = asTaskResult(scrubDeep(outcome, this.#engine.client.scrub));
    await this.#write((cur) => {
      if (cur.status !== "working") return undefined;
      const done: StoredTask = {
        ...cur,
        status: "completed",
        result,
        context: { ...cur.context, deliverable },
      };
      const first = firstLine(result);
      if (first === undefined) delete done.statusMessage;
      else done.statusMessage = first;
      delete done.nextReadAt;
      delete done.lease;
      return done;
    }).catch(() => {
      // The store refused the result: the lease lapses and the next tasks/get takes the work over.
    });
  }

  /** A new status line or read time, and the lease renewed, written in order (latest wins). */
  #note(o: { message?: string; readAt?: number }): void {
    if (o.message !== undefined) this.#message = o.message;
    if (o.readAt !== undefined) this.nextReadAt = o.readAt;
    if (this.#dirty || this.#taskId === "") return;
    this.#dirty = true;
    void this.#write((cur) => {
      this.#dirty = false;
      if (cur.status !== "working") return undefined;
      const next = { ...cur, lease: { owner: OWNER, until: Date.now() + TASK_LEASE_MS } };
      if (this.#message !== undefined) next.statusMessage = this.#message;
      if (this.nextReadAt !== undefined) next.nextReadAt = this.nextReadAt;
      return next;
    }).catch(() => {});
  }

  /**
   * One compare-and-set write, after the ones before it. Finds out, as it goes, whether the task
   * was cancelled (its wait stops) or its lease taken by another process (the work stops here).
   */
  #write(change: (cur: StoredTask) => StoredTask | undefined): Promise<void> {
    return this.#writes.run(async () => {
      const store = await taskStore(this.#engine);
      const stored = await store.change(this.#taskId, this.#engine.keyHash, (cur) => {
        if (cur.lease !== undefined && cur.lease.owner !== OWNER) return undefined;
        return change(cur);
      });
      if (stored === undefined || (stored.lease !== undefined && stored.lease.owner !== OWNER)) {
        this.stop.abort(new Error("another process drives this task now"));
      } else if (stored.status === "cancelled") this.cancel.abort();
      this.#release(stored, false);
    });
  }

  #release(stored: StoredTask | undefined, all: boolean): void {
    this.#holds = this.#holds.filter((hold) => !(hold(stored) || all));
  }

  /**
   * Resolves once the read due at `nextReadAt` has its outcome stored (the next read scheduled, or
   * the task no longer working: finished, cancelled), or after `ms`.
   */
  nextStep(ms: number): Promise<void> {
    const due = this.nextReadAt;
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#holds.push((stored) => {
        const stepped = stored === undefined || stored.status !== "working" || stored.nextReadAt !== due;
        if (stepped) {
          clearTimeout(timer);
          resolve();
        }
        return stepped;
      });
    });
  }

  async release(): Promise<void> {
    this.stop.abort(new Error("the server is shutting down"));
    await this.#write((cur) => {
      if (cur.lease?.owner !== OWNER) return undefined;
      const next = { ...cur };
      delete next.lease;
      return next;
    }).catch(() => {});
  }
}

/** Adds to the task's context; a task cancelled meanwhile says anew what goes on and is charged. */
function withContext(cur: StoredTask, add: Partial<TaskContext>): StoredTask {
  const next: StoredTask = { ...cur, context: { ...cur.context, ...add } };
  if (cur.status === "cancelled") next.statusMessage = cancelledMessage(next);
  return next;
}

/**
 * The result as the task carries it: the tool's own, marked as an error when the service's task
 * failed (hosts show a completed task with `isError` as a failure; a `failed` task is kept for
 * protocol errors, and VS Code drops its result).
 */
function asTaskResult(outcome: ToolOutcome): Record<string, unknown> {
  const task = (outcome as { structuredContent?: { task?: { status?: unknown } } }).structuredContent?.task;
  const failed = task?.status === "failed" || task?.status === "cancelled";
  return { ...(outcome as Record<string, unknown>), ...(failed ? { isError: true } : {}) };
}

function firstLine(result: Record<string, unknown>): string | undefined {
  const content = result.content as { type?: string; text?: string }[] | undefined;
  const text = content?.find((c) => c.type === "text")?.text;
  return text?.split("\n")[0];
}

export { isTerminalTask };
