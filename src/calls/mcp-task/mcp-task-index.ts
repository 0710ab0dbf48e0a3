/**
 * Which tasks one key has, for `tasks/list` (the 2025-11-25 form, mcp-task-wire-2025.ts): one keyed
 * value per key hash beside its tasks (mcp-task-store.ts), holding the newest task IDs with their
 * expiry. Bounded (the newest TASK_INDEX_MAX) and expiring (entries past their task's `ttlMs` are
 * dropped at each write, and the value itself expires with its last task). Its storage key holds
 * the key hash, so a key reads only its own list; every task it names is read again under that
 * same key hash, so the list never says more than `tasks/get` would.
 */
import type { KeyedStore } from "../../ledger/keyed-store.js";

/** The most tasks a key's list keeps: older ones stay readable by ID until they expire. */
export const TASK_INDEX_MAX = 200;

interface Entry {
  /** The task's ID. */
  id: string;
  /** When the task expires (epoch ms). */
  exp: number;
}

interface Stored {
  v: 1;
  /** Oldest first. */
  tasks: Entry[];
}

const indexKey = (principal: string): string => `mcp-task-index:${principal}`;

function parse(text: string | undefined, now: number): Entry[] {
  if (text === undefined) return [];
  const value = JSON.parse(text) as Stored;
  if (value?.v !== 1 || !Array.isArray(value.tasks)) throw new Error("a stored task list is not readable");
  return value.tasks.filter((e) => e.exp > now);
}

export class TaskIndex {
  readonly #kv: KeyedStore;
  readonly #now: () => number;

  constructor(kv: KeyedStore, now: () => number = Date.now) {
    this.#kv = kv;
    this.#now = now;
  }

  /** Adds a task to its key's list (compare-and-set, again on the newer list when another writer won). */
  async add(principal: string, taskId: string, exp: number): Promise<void> {
    const key = indexKey(principal);
    for (let attempt = 0; attempt < 16; attempt++) {
      const now = this.#now();
      const text = await this.#kv.get(key);
      const tasks = [...parse(text, now), { id: taskId, exp }].slice(-TASK_INDEX_MAX);
      const ttl = Math.max(...tasks.map((e) => e.exp)) - now;
      if (ttl <= 0) return;
      if (await this.#kv.swap(key, text, JSON.stringify({ v: 1, tasks } satisfies Stored), ttl)) return;
    }
    throw new Error("a key's task list kept changing under 16 attempts to add to it");
  }

  /** The key's task IDs still live, newest first. */
  async ids(principal: string): Promise<string[]> {
    const tasks = parse(await this.#kv.get(indexKey(principal)), this.#now());
    return tasks.map((e) => e.id).reverse();
  }
}
