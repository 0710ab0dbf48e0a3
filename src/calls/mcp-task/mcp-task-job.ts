/**
 * The work of one MCP task in this process (mcp-task-background.ts hands it out): the steps after the
 * claim run with the task's own signals and budget, their progress and next read are written to the
 * task (renewing this process's lease), and their result is stored on it. Every write is a
 * compare-and-set that also learns whether the task was cancelled (the wait stops) or taken over by
 * another process (the work stops here).
 */
import { randomBytes } from "node:crypto";
import { DEFAULT_BUDGET_CAP_MS, TASK_LEASE_MS, TASK_TTL_MS, TASK_WAIT_MS } from "../../config/time-limits.js";
import { IdentifiedError } from "../../ledger/ledger-errors.js";
import type { RunResult } from "../../ledger/open-ledger.js";
import { SerialQueue } from "../../ledger/store.js";
import { budgetOf } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import type { ToolOutcome } from "../../mcp/define-tool.js";
import { failedGeneration } from "../../mcp/results.js";
import { scrubDeep } from "../../shared/scrub.js";
import {
  cancelledMessage,
  type SentFacts,
  type Steps,
  type TaskContext,
  taskStore,
} from "./mcp-task-record.js";
import type { StoredTask } from "./mcp-task-store.js";

/** This process, as the holder of a task's lease. */
export const OWNER = `${process.pid}.${randomBytes(4).toString("hex")}`;
/** The tasks whose work this process drives, and those it is taking over. */
export const jobs = new Map<string, Job>();
export const adopting = new Set<string>();

export class Job {
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
  /** Told when the work ends here (its slot of tasks in flight goes back). */
  onDone: (() => void) | undefined;
  /** Told once, with the stored task, when a write finds it no longer working. */
  onEnded: ((rec: StoredTask) => void) | undefined;
  /** tasks/get held for a read: each released by the first write it waits for (true). */
  #holds: ((stored: StoredTask | undefined) => boolean)[] = [];
  #renew: NodeJS.Timeout | undefined;

  /** The key whose task this is (by hash): only its own reads are held for the next read. */
  get keyHash(): string {
    return this.#engine.keyHash;
  }

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
      // A task's background steps ask nothing: its spending was confirmed before it was created.
      answered: undefined,
      rendersApps: false,
      // As in a call's progress (src/mcp/context.ts): a message may quote the service, so the key.
      progress: async (message) => this.#note({ message: this.#engine.client.scrub(message) }),
      scheduled: (readAt) => this.#note({ readAt }),
      // Delivered is decided when a tasks/get carries the result (src/calls/mcp-task/mcp-task-requests.ts).
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
      this.onDone?.();
      this.#release(undefined, true);
    });
  }

  async #run<T>(createdAt: number, steps: Steps<T>, start: () => Promise<RunResult<T>>): Promise<void> {
    let outcome: ToolOutcome;
    let deliverable = false;
    let sentAs: string | undefined;
    const scrub = this.#engine.client.scrub;
    try {
      const run = await start();
      sentAs = run.identity;
      const sent: SentFacts = { reused: run.reused, joined: run.joined, ...steps.facts(run.result) };
      // The send's outcome stands whatever the store does now: a failed write of what it answered
      // is no refusal (the request was sent, and the result below names its identity and task). A
      // process taking the work over finds the service's task in the ledger's record instead.
      await this.#write((cur) => withContext(cur, { sent })).catch(() => {});
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
      // After the send, a failure (a ledger or store write while waiting) is no "nothing was sent":
      // it is told with the identity the request was sent under.
      const after = sentAs !== undefined && !(err instanceof IdentifiedError);
      outcome = steps.refuse(after ? new IdentifiedError(err, sentAs as string, "sent") : err);
      // Cancelled while sending: the cancelled task says how sending ended (what it means for money).
      if (this.cancel.signal.aborted && !this.stop.signal.aborted) {
        const ended = scrub(firstLine(outcome as Record<string, unknown>) ?? "refused");
        await this.#write((cur) => withContext(cur, { ended })).catch(() => {});
        return;
      }
    }
    // Stopped or cancelled meanwhile: what was presented is the task as it stood, not its end.
    if (this.stop.signal.aborted || this.cancel.signal.aborted) return;
    const result = asTaskResult(scrubDeep(outcome, scrub));
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
    }).catch(() => {
      // The store failed this one: the next note (the lease's renewal at the latest) tries again.
      this.#dirty = false;
    });
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
      if (stored !== undefined && stored.status !== "working" && this.onEnded !== undefined) {
        const ended = this.onEnded;
        this.onEnded = undefined;
        ended(stored);
      }
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
  const failed = failedGeneration(task?.status);
  return { ...(outcome as Record<string, unknown>), ...(failed ? { isError: true } : {}) };
}

function firstLine(result: Record<string, unknown>): string | undefined {
  const content = result.content as { type?: string; text?: string }[] | undefined;
  const text = content?.find((c) => c.type === "text")?.text;
  return text?.split("\n")[0];
}
