/**
 * The wire of the MCP Tasks extension `io.modelcontextprotocol/tasks` (protocol 2026-07-28,
 * SEP-2663), as the conformance suite (`@modelcontextprotocol/conformance` 0.2.0-alpha.12) checks
 * it: advertised under `capabilities.extensions`; declared by the client per request in
 * `_meta["io.modelcontextprotocol/clientCapabilities"].extensions`; a flat `CreateTaskResult`
 * (`resultType: "task"`, no nested `task`); `tasks/get` inlines the terminal `result` or `error`;
 * `tasks/get`, `tasks/update` and `tasks/cancel` from a request that did not declare the
 * extension answer -32021 (missing required client capability); an unknown task -32602.
 * The shapes follow the SDK's draft runtime (typescript-sdk PR #2782, `server/ext/tasks/wire`).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type McpServer,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ["completed", "failed", "cancelled"];

/** A task as every task-bearing message carries it. Times are ISO 8601; durations integer ms. */
export interface Task {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/** What `tasks/get` answers: the task, with its result (completed) or JSON-RPC error (failed). */
export type DetailedTask = Task & {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** What a `tools/call` answers in place of its result: the flat task, `resultType: "task"`. */
export type CreateTaskResult = Task & { resultType: "task" };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The first protocol revision with this form of tasks: earlier ones never get it. */
const TASKS_SINCE = "2026-07-28";

/**
 * Whether this very request declared the extension, on a connection served on 2026-07-28 or later.
 * A 2025-era session never gets a task in this form, even when its request's `_meta` says so
 * (SEP-2663: "under earlier protocol versions … a server MUST NOT return CreateTaskResult"). The
 * revision is the instance's own: the SDK binds it to the era it serves (an `initialize` makes it
 * a 2025 one), which a request's `_meta` cannot change.
 */
export function declaresTasks(server: McpServer, ctx: ServerContext): boolean {
  if ((server.server.getNegotiatedProtocolVersion() ?? "") < TASKS_SINCE) return false;
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY];
  if (!isRecord(capabilities)) return false;
  const extensions = capabilities.extensions;
  return isRecord(extensions) && TASKS_EXTENSION in extensions;
}

/** Refuses (-32021) a `tasks/*` request that did not declare the extension. */
export function requireTasks(server: McpServer, ctx: ServerContext, method: string): void {
  if (declaresTasks(server, ctx)) return;
  throw new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    `${method} needs the request to declare the "${TASKS_EXTENSION}" extension in _meta["${CLIENT_CAPABILITIES_META_KEY}"].extensions (protocol ${TASKS_SINCE})`,
  );
}

/** An unknown, expired or another key's task: the same answer for each, so none is told apart. */
export const taskNotFound = (): ProtocolError =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, "Task not found (unknown, expired, or not this key's)");

/**
 * `params` of `tasks/get`, `tasks/update`, `tasks/cancel`: a task ID (ours are UUIDs; anything
 * longer than this was never one). Other fields (`_meta`, `inputResponses`) pass.
 */
export const TaskIdParams = z.looseObject({ taskId: z.string().min(1).max(128) });
