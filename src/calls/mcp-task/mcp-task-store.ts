/**
 * MCP tasks kept in the ledger's store, as keyed values with expiry beside its records
 * (src/ledger/keyed-store.ts: one SQL row, or one Redis key, per task), so every replica and every
 * restart on the same store sees the same tasks for their whole `ttlMs`.
 *
 * The interface is the one the SDK's draft runtime gives its `TaskStore` (typescript-sdk PR #2782,
 * the store module of its `server/ext/tasks/`): create, get, update, cancel, each task bound to a principal, and
 * an unknown, expired or foreign task read as `undefined`. So that runtime can take over the wire
 * when it ships. Here the principal is the hash of the API key behind the request, and it is part
 * of the storage key: another key's lookup finds nothing and learns nothing.
 *
 * The writer side (`read`, `change`) is what the work driving a task uses: every write is a
 * compare-and-set on the whole value, so a cancel, a lease taken over by another replica and the
 * driver's own progress never overwrite each other.
 */
import { randomUUID } from "node:crypto";
import { TASK_POLL } from "../../config/time-limits.js";
import type { KeyedStore } from "../../ledger/keyed-store.js";
import {
  type DetailedTask,
  type Task,
  type TaskStatus,
  TERMINAL_TASK_STATUSES,
} from "../../mcp/mcp-task-wire.js";
import { TaskIndex } from "./mcp-task-index.js";

/** The stored form of one task (JSON). Times are epoch milliseconds. */
export interface StoredTask {
  v: 1;
  taskId: string;
  /** The key hash the task belongs to. */
  principal: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: number;
  lastUpdatedAt: number;
  ttlMs: number;
  /** When the work's next read of the service is due: `pollIntervalMs` follows it. */
  nextReadAt?: number;
  /** Which process drives the work, and until when (renewed while it does). */
  lease?: { owner: string; until: number };
  /** What the work needs to go on after a restart, elsewhere (store-defined: opaque here). */
  context: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

export interface CreateTaskParams {
  principal: string;
  ttlMs: number;
  context: Record<string, unknown>;
  statusMessage?: string;
  lease?: { owner: string; until: number };
  /** Kept in the key's list for `tasks/list` (the 2025-11-25 form, src/calls/mcp-task/mcp-task-index.ts). */
  listed?: boolean;
}

export interface TaskAccess {
  principal: string;
}

/** The draft runtime's seam (see above). */
export interface TaskStore {
  /** Resolves once a `get` would find the task (durable creation). */
  create(params: CreateTaskParams): Promise<Task>;
  get(taskId: string, access: TaskAccess): Promise<DetailedTask | undefined>;
  /** No task of ours asks for input: an acknowledgement, true when the task is found. */
  update(taskId: string, inputResponses: Record<string, unknown>, access: TaskAccess): Promise<boolean>;
  /** Cooperative: marks the task cancelled; the work stops waiting when it learns of it. */
  cancel(taskId: string, access: TaskAccess): Promise<boolean>;
}

export interface LedgerTaskStoreOptions {
  now?: () => number;
  /** What a task cancelled in this state says (the work's own words: what happens to the money). */
  cancelledMessage?: (rec: StoredTask) => string | undefined;
}

const storageKey = (principal: string, taskId: string): string => `mcp-task:${principal}:${taskId}`;

const writeListeners = new Set<(rec: StoredTask) => void>();
/**
 * Told of every change of a task this process writes, as stored: a listen following it sends it at
 * once (src/calls/mcp-task/mcp-task-watch.ts); changes made by other processes reach it by reading.
 */
export function onTaskWrite(listener: (rec: StoredTask) => void): () => void {
  writeListeners.add(listener);
  return () => writeListeners.delete(listener);
}
export const isTerminalTask = (status: TaskStatus): boolean => TERMINAL_TASK_STATUSES.includes(status);

export class LedgerTaskStore implements TaskStore {
  readonly #kv: KeyedStore;
  readonly #now: () => number;
  readonly #cancelledMessage: (rec: StoredTask) => string | undefined;
  readonly #index: TaskIndex;

  constructor(kv: KeyedStore, o: LedgerTaskStoreOptions = {}) {
    this.#kv = kv;
    this.#now = o.now ?? Date.now;
    this.#cancelledMessage = o.cancelledMessage ?? (() => undefined);
    this.#index = new TaskIndex(kv, this.#now);
  }

  async create(params: CreateTaskParams): Promise<Task> {
    if (!Number.isSafeInteger(params.ttlMs) || params.ttlMs <= 0)
      throw new RangeError(`ttlMs must be a positive integer, got ${params.ttlMs}`);
    const now = this.#now();
    const rec: StoredTask = {
      v: 1,
      taskId: randomUUID(),
      principal: params.principal,
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: params.ttlMs,
      context: params.context,
      ...(params.statusMessage === undefined ? {} : { statusMessage: params.statusMessage }),
      ...(params.lease === undefined ? {} : { lease: params.lease }),
    };
    // A random UUID never collides in practice; put-if-absent makes sure one never overwrites.
    const stored = await this.#kv.swap(
      storageKey(rec.principal, rec.taskId),
      undefined,
      JSON.stringify(rec),
      rec.ttlMs,
    );
    if (!stored) throw new Error("a new task's ID was already taken");
    // Unlisted, the task is still read, followed and cancelled by its ID: a list that could not be
    // written does not take the task (and the work already sent) away from the client.
    if (params.listed === true)
      await this.#index.add(rec.principal, rec.taskId, rec.createdAt + rec.ttlMs).catch(() => {});
    return taskOf(rec, now);
  }

  /**
   * One page of the principal's listed tasks, newest first: `after` is the last task ID of the
   * previous page (undefined when it is not in the list any more: the caller refuses the cursor).
   */
  async list(
    principal: string,
    after: string | undefined,
    limit: number,
  ): Promise<{ tasks: StoredTask[]; next?: string } | undefined> {
    const ids = await this.#index.ids(principal);
    const start = after === undefined ? 0 : ids.indexOf(after) + 1;
    if (after !== undefined && start === 0) return undefined;
    const tasks: StoredTask[] = [];
    let i = start;
    for (; i < ids.length && tasks.length < limit; i++) {
      const rec = await this.read(ids[i] as string, principal);
      if (rec !== undefined) tasks.push(rec);
    }
    const last = tasks.at(-1);
    return i < ids.length && last !== undefined ? { tasks, next: last.taskId } : { tasks };
  }

  async get(taskId: string, access: TaskAccess): Promise<DetailedTask | undefined> {
    const rec = await this.read(taskId, access.principal);
    return rec === undefined ? undefined : detailed(rec, this.#now());
  }

  async update(
    taskId: string,
    _inputResponses: Record<string, unknown>,
    access: TaskAccess,
  ): Promise<boolean> {
    return (await this.read(taskId, access.principal)) !== undefined;
  }

  async cancel(taskId: string, access: TaskAccess): Promise<boolean> {
    const rec = await this.change(taskId, access.principal, (cur) => {
      if (isTerminalTask(cur.status)) return undefined;
      const next: StoredTask = { ...cur, status: "cancelled" };
      delete next.nextReadAt;
      const message = this.#cancelledMessage(next);
      if (message === undefined) delete next.statusMessage;
      else next.statusMessage = message;
      return next;
    });
    return rec !== undefined;
  }

  /** The stored task, or undefined when unknown, expired, or another principal's. */
  async read(taskId: string, principal: string): Promise<StoredTask | undefined> {
    const text = await this.#kv.get(storageKey(principal, taskId));
    return text === undefined ? undefined : parse(text);
  }

  /**
   * Applies `change` to the stored task by compare-and-set, again on the newer value when another
   * writer got there first; `change` returns undefined to leave the task as it is. The task as
   * stored afterwards, or undefined when there is none.
   */
  async change(
    taskId: string,
    principal: string,
    change: (cur: StoredTask) => StoredTask | undefined,
  ): Promise<StoredTask | undefined> {
    const key = storageKey(principal, taskId);
    for (let attempt = 0; attempt < 16; attempt++) {
      const text = await this.#kv.get(key);
      if (text === undefined) return undefined;
      const cur = parse(text);
      const next = change(structuredClone(cur));
      if (next === undefined) return cur;
      const now = this.#now();
      next.lastUpdatedAt = Math.max(now, cur.lastUpdatedAt);
      const ttlLeft = cur.createdAt + cur.ttlMs - now;
      if (ttlLeft <= 0) return undefined;
      // A write that keeps the status (progress, the next read's time, a lease renewed or taken)
      // skips a sync of its own (SQLite: it waited on the disk with the event loop held, and one
      // key's 300 slow tasks made every other user wait). Lost in a machine crash, it costs a read
      // again: the lease lapses and another process resumes from the ledger's durable record. A
      // change of status (completed, failed, cancelled) is synced as before.
      const deferred = next.status === cur.status;
      if (await this.#kv.swap(key, text, JSON.stringify(next), ttlLeft, { deferred })) {
        for (const listener of writeListeners) listener(next);
        return next;
      }
    }
    throw new Error(`task ${taskId} kept changing under 16 attempts to update it`);
  }

  /** How `rec` reads on the wire now. */
  detailed(rec: StoredTask): DetailedTask {
    return detailed(rec, this.#now());
  }
}

function parse(text: string): StoredTask {
  const value = JSON.parse(text) as StoredTask;
  if (value?.v !== 1 || typeof value.taskId !== "string") throw new Error("a stored task is not readable");
  return value;
}

/**
 * When to come back: just before the work's next read of the service while that is ahead (a
 * `tasks/get` arriving then is held until the read's outcome is stored, src/calls/mcp-task/mcp-task-requests.ts),
 * just after it once it is due (a replica that cannot hold), and soon while nothing is scheduled
 * (sending, or presenting a finished task). A read long overdue means the process driving the work
 * stopped: come back when its lease lapses, when any `tasks/get` takes the work over.
 */
export function pollIntervalMs(rec: StoredTask, now: number): number {
  const at = rec.nextReadAt;
  const overdue = isOverdue(rec, now);
  let ms: number = TASK_POLL.unscheduledMs;
  if (overdue && rec.lease !== undefined) {
    // Nothing a poll does makes the lease lapse sooner: at least a second between polls.
    const untilLapse = Math.min(rec.lease.until - now, TASK_POLL.staleMs);
    return Math.round(Math.min(TASK_POLL.maxMs, Math.max(TASK_POLL.stalledMinMs, untilLapse)));
  }
  if (at !== undefined && at - TASK_POLL.leadMs > now) ms = at - TASK_POLL.leadMs - now;
  else if (at !== undefined && !overdue) ms = at + TASK_POLL.afterMs - now;
  return Math.round(Math.min(TASK_POLL.maxMs, Math.max(TASK_POLL.minMs, ms)));
}

/** A read long overdue: the process driving the work stopped (or stalls). */
function isOverdue(rec: StoredTask, now: number): boolean {
  const at = rec.nextReadAt;
  return at === undefined ? now - rec.lastUpdatedAt > TASK_POLL.holdMs : now >= at + TASK_POLL.holdMs;
}

/**
 * What a task says while its driver is gone: not the last status it wrote (stale), but that
 * another process takes the work over once the lease lapses, and that nothing is sent twice.
 */
function statusOf(rec: StoredTask, now: number): string | undefined {
  if (rec.status !== "working" || rec.lease === undefined || !isOverdue(rec, now)) return rec.statusMessage;
  const seconds = Math.max(0, Math.ceil((rec.lease.until - now) / 1000));
  const when = seconds === 0 ? "now, on the next tasks/get" : `in about ${seconds} s`;
  return `The process driving this task stopped reporting; another takes the work over ${when} and goes on from where it stood (nothing is sent or charged twice).`;
}

function taskOf(rec: StoredTask, now: number): Task {
  const statusMessage = statusOf(rec, now);
  return {
    taskId: rec.taskId,
    status: rec.status,
    ...(statusMessage === undefined ? {} : { statusMessage }),
    createdAt: new Date(rec.createdAt).toISOString(),
    lastUpdatedAt: new Date(rec.lastUpdatedAt).toISOString(),
    ttlMs: rec.ttlMs,
    ...(isTerminalTask(rec.status) ? {} : { pollIntervalMs: pollIntervalMs(rec, now) }),
  };
}

function detailed(rec: StoredTask, now: number): DetailedTask {
  const task: DetailedTask = taskOf(rec, now);
  if (rec.status === "completed") task.result = rec.result ?? { content: [] };
  if (rec.status === "failed") task.error = rec.error ?? { code: -32603, message: "The task failed" };
  return task;
}
