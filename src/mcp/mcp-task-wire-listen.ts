/**
 * The task part of a 2026-07-28 `subscriptions/listen` (SEP-2663, "Task Status Notifications";
 * docs/tasks.md#pushed-to-a-listener): the client names tasks in `params.notifications.taskIds`,
 * the server's `notifications/subscriptions/acknowledged` lists the IDs it agreed to follow, and
 * each `notifications/tasks` carries the task exactly as `tasks/get` would answer it then, with
 * `_meta["io.modelcontextprotocol/subscriptionId"]` (the listen request's ID) as every message of
 * the stream does. A listen asking for tasks without declaring the extension answers -32021.
 * The SDK's listen routers know none of this (its filter schema strips `taskIds`): the transports
 * add it around them (src/transports/http-task-listens.ts, stdio-task-listens.ts), over a feed the
 * calls give (src/calls/mcp-task/mcp-task-watch.ts).
 */
import { CLIENT_CAPABILITIES_META_KEY, SUBSCRIPTION_ID_META_KEY } from "@modelcontextprotocol/server";
import { type DetailedTask, TASKS_EXTENSION } from "./mcp-task-wire.js";

/** At most this many task IDs are followed per listen: the acknowledgement names the ones that are. */
export const MAX_LISTENED_TASKS = 32;

/** What one listen follows: the IDs agreed, started once the acknowledgement is written. */
export interface TaskWatch {
  /** Of the IDs asked for, the key's own tasks (unknown and another key's left out alike). */
  readonly taskIds: string[];
  /** Sends each task's state now, then at every change, until it ends or `close`. */
  start(): void;
  close(): void;
}

export interface TaskWatchHooks {
  /** The task as `tasks/get` would answer it now. */
  onTask(task: DetailedTask): void;
  /** Every task followed ended (and was sent) or expired: nothing more will come. */
  onSettled(): void;
}

/** How a transport follows tasks for the key behind a listen (the calls' watch, by engine). */
export type TaskFeed = (taskIds: string[], hooks: TaskWatchHooks) => Promise<TaskWatch>;

/** A listen's request for tasks, read off its message: absent when it names none. */
export type TaskListenAsk =
  | { ok: true; taskIds: string[] }
  | { ok: false; error: { code: number; message: string; data?: unknown } };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * The tasks a `subscriptions/listen` message asks to follow, checked: undefined when it names
 * none (the SDK serves it alone); a refusal for a malformed list or a request that did not declare
 * the extension; else the distinct IDs, at most MAX_LISTENED_TASKS of them.
 */
export function taskListenAsk(message: unknown): TaskListenAsk | undefined {
  const params = isRecord(message) && isRecord(message.params) ? message.params : undefined;
  const notifications = isRecord(params?.notifications) ? params.notifications : undefined;
  const ids = notifications?.taskIds;
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string" && id.length > 0 && id.length <= 128))
    return {
      ok: false,
      error: { code: -32602, message: "Invalid params: notifications.taskIds must be a list of task IDs" },
    };
  if (!declaresTasksIn(params?._meta))
    return {
      ok: false,
      error: {
        code: -32021,
        message: `Task notifications need the request to declare the "${TASKS_EXTENSION}" extension in _meta["${CLIENT_CAPABILITIES_META_KEY}"].extensions`,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      },
    };
  return { ok: true, taskIds: [...new Set(ids as string[])].slice(0, MAX_LISTENED_TASKS) };
}

function declaresTasksIn(meta: unknown): boolean {
  const capabilities = isRecord(meta) ? meta[CLIENT_CAPABILITIES_META_KEY] : undefined;
  const extensions = isRecord(capabilities) ? capabilities.extensions : undefined;
  return isRecord(extensions) && TASKS_EXTENSION in extensions;
}

/** The SDK's acknowledgement with the tasks agreed added (none agreed: left as it was). */
export function withAgreedTasks(
  message: Record<string, unknown>,
  taskIds: string[],
): Record<string, unknown> {
  if (taskIds.length === 0 || !isRecord(message.params)) return message;
  const notifications = isRecord(message.params.notifications) ? message.params.notifications : {};
  return { ...message, params: { ...message.params, notifications: { ...notifications, taskIds } } };
}

/** Whether a message is the acknowledgement of the listen `id`. */
export function acknowledges(message: unknown, id: unknown): boolean {
  if (!isRecord(message) || message.method !== "notifications/subscriptions/acknowledged") return false;
  const meta = isRecord(message.params) ? message.params._meta : undefined;
  return isRecord(meta) && meta[SUBSCRIPTION_ID_META_KEY] === id;
}

/** `notifications/tasks` for `task` on the listen `subscriptionId`. */
export function taskNotification(task: DetailedTask, subscriptionId: unknown): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    method: "notifications/tasks",
    params: { ...task, _meta: { [SUBSCRIPTION_ID_META_KEY]: subscriptionId } },
  };
}

/** The JSON-RPC error answering listen `id`. */
export const listenError = (id: unknown, error: { code: number; message: string; data?: unknown }) => ({
  jsonrpc: "2.0" as const,
  id: (id ?? null) as string | number | null,
  error,
});
