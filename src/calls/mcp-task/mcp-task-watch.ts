/**
 * Following tasks for the 2026-07-28 listens that name them (src/mcp/mcp-task-wire-listen.ts): each
 * listen is told a task's state when it starts, then at every change of its status or status
 * message, until the task ends; the terminal state carries the result inline, as `tasks/get` does.
 *
 * The tasks live in the ledger's store, and the process that writes a change may be another
 * replica: so every task followed is read again from the store every WATCH_INTERVAL_MS (at most
 * READS_PER_TICK reads a tick over the whole process, the least recently read first; each task is
 * read once however many listens follow it). None of the three stores offers a change feed
 * through the keyed API (src/ledger/keyed-store.ts; PostgreSQL's NOTIFY and Redis's pub/sub would,
 * SQLite has none), and a read a second per followed task is cheap beside the service's own
 * polling. A change this process writes is sent at once (onTaskWrite). A read also drives the task
 * forward as `tasks/get` does: a task whose process stopped is taken over here
 * (mcp-task-read.ts), so a client that only listens still sees it finish.
 *
 * Only the key's own tasks are followed: another key's ID reads as unknown and is left out of the
 * acknowledgement exactly as an unknown one, and nothing is ever sent for it.
 */
import type { Engine } from "../../mcp/context.js";
import type { DetailedTask } from "../../mcp/mcp-task-wire.js";
import type { TaskWatch, TaskWatchHooks } from "../../mcp/mcp-task-wire-listen.js";
import { readTask } from "./mcp-task-read.js";
import { type Resumable, taskStore } from "./mcp-task-record.js";
import { isTerminalTask, onTaskWrite, type StoredTask } from "./mcp-task-store.js";

/** How often a followed task is read again from the store (changes made by other processes). */
export const WATCH_INTERVAL_MS = 1_000;
/** The most store reads one tick makes, over every task followed in the process. */
export const READS_PER_TICK = 256;

interface Followed {
  engine: Engine;
  resumable: Resumable;
  taskId: string;
  watchers: Set<Watcher>;
  checkedAt: number;
  reading: boolean;
}

const followed = new Map<string, Followed>();
const keyOf = (principal: string, taskId: string) => `${principal}\n${taskId}`;
let timer: ReturnType<typeof setInterval> | undefined;
let unhook: (() => void) | undefined;

class Watcher {
  readonly #hooks: TaskWatchHooks;
  readonly #left: Set<string>;
  readonly #last = new Map<string, string>();
  #started = false;
  #closed = false;

  constructor(
    hooks: TaskWatchHooks,
    readonly keyHash: string,
    taskIds: string[],
  ) {
    this.#hooks = hooks;
    this.#left = new Set(taskIds);
  }

  start(): void {
    this.#started = true;
  }

  /** The task as it reads now: sent when its status or message changed since this listen's last. */
  see(task: DetailedTask): void {
    if (!this.#started || this.#closed || !this.#left.has(task.taskId)) return;
    const seen = `${task.status}\n${task.statusMessage ?? ""}`;
    if (this.#last.get(task.taskId) === seen) return;
    this.#last.set(task.taskId, seen);
    this.#hooks.onTask(task);
    if (isTerminalTask(task.status)) this.drop(task.taskId);
  }

  /** The task ended or expired: no longer followed; the last one settles the listen. */
  drop(taskId: string): void {
    if (!this.#started || this.#closed || !this.#left.delete(taskId)) return;
    unfollow(this, taskId);
    if (this.#left.size > 0) return;
    this.close();
    this.#hooks.onSettled();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const taskId of this.#left) unfollow(this, taskId);
  }
}

/**
 * Follows, of `taskIds`, the tasks of `engine`'s key: the agreed IDs at once, the states from
 * `start()` (the transport writes its acknowledgement first).
 */
export async function watchTasks(
  engine: Engine,
  resumable: Resumable,
  taskIds: string[],
  hooks: TaskWatchHooks,
): Promise<TaskWatch> {
  const store = await taskStore(engine);
  const found = await Promise.all(
    taskIds.map(async (id) => ((await store.read(id, engine.keyHash)) === undefined ? undefined : id)),
  );
  const agreed = found.filter((id): id is string => id !== undefined);
  const watcher = new Watcher(hooks, engine.keyHash, agreed);
  for (const taskId of agreed) follow(watcher, engine, resumable, taskId);
  return {
    taskIds: agreed,
    start() {
      watcher.start();
      for (const taskId of agreed) {
        const f = followed.get(keyOf(engine.keyHash, taskId));
        if (f !== undefined) void refresh(f);
      }
    },
    close: () => watcher.close(),
  };
}

function follow(watcher: Watcher, engine: Engine, resumable: Resumable, taskId: string): void {
  const key = keyOf(engine.keyHash, taskId);
  let f = followed.get(key);
  if (f === undefined) {
    f = { engine, resumable, taskId, watchers: new Set(), checkedAt: 0, reading: false };
    followed.set(key, f);
  }
  f.watchers.add(watcher);
  unhook ??= onTaskWrite(written);
  if (timer === undefined) {
    timer = setInterval(tick, WATCH_INTERVAL_MS);
    timer.unref();
  }
}

function unfollow(watcher: Watcher, taskId: string): void {
  const key = keyOf(watcher.keyHash, taskId);
  const f = followed.get(key);
  if (f === undefined) return;
  f.watchers.delete(watcher);
  if (f.watchers.size > 0) return;
  followed.delete(key);
  if (followed.size > 0) return;
  clearInterval(timer);
  timer = undefined;
  unhook?.();
  unhook = undefined;
}

/** A change this process wrote: sent to the listens following the task now. */
function written(rec: StoredTask): void {
  const f = followed.get(keyOf(rec.principal, rec.taskId));
  if (f === undefined) return;
  void taskStore(f.engine).then(
    (store) => {
      const task = store.detailed(rec);
      for (const w of [...f.watchers]) w.see(task);
    },
    () => {},
  );
}

/** The least recently read tasks, up to READS_PER_TICK, read again. */
function tick(): void {
  const due = [...followed.values()]
    .filter((f) => !f.reading)
    .sort((a, b) => a.checkedAt - b.checkedAt)
    .slice(0, READS_PER_TICK);
  for (const f of due) void refresh(f);
}

async function refresh(f: Followed): Promise<void> {
  if (f.reading) return;
  f.reading = true;
  try {
    const read = await readTask(f.engine, f.taskId, f.resumable, { hold: false });
    f.checkedAt = Date.now();
    for (const w of [...f.watchers]) {
      if (read === undefined) w.drop(f.taskId);
      else w.see(read.task);
    }
  } catch {
    // The store did not answer: the next tick reads it again.
    f.checkedAt = Date.now();
  } finally {
    f.reading = false;
  }
}

/** Tasks followed in this process (tests). */
export const followedCount = (): number => followed.size;
