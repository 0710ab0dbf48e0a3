/**
 * The 2025-11-25 form of MCP Tasks (experimental in that revision), as VS Code Copilot and the MCP
 * Inspector run it, over the same tasks as the 2026-07-28 extension (mcp-task-wire.ts): the server
 * advertises `capabilities.tasks`, lists the tools that take a task with `execution.taskSupport`,
 * and a `tools/call` carrying `params.task` answers `{ task }` (a CreateTaskResult) at once; then
 * `tasks/get` (the task alone), `tasks/result` (blocks until the end: the tool's own result, with
 * `io.modelcontextprotocol/related-task`), `tasks/list` (the key's tasks, by cursor) and
 * `tasks/cancel` (the task, cancelled). Served only on a connection whose revision is 2025-11-25
 * (an `initialize` made it so): the SDK strips `capabilities.tasks` and `execution` from the
 * answers of a 2026-07-28 one, where these requests never reach here.
 */
import {
  type CreateTaskResult as CreateTaskResult2025,
  isTaskAugmentedRequestParams,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ServerCapabilities,
  type Task as Task2025,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import type { DetailedTask, Task } from "./mcp-task-wire.js";

export type { Task2025 };

/** The first revision with this form, and the one that replaced it (mcp-task-wire.ts). */
const FROM = "2025-11-25";
const UNTIL = "2026-07-28";

/** `capabilities.tasks` of the 2025-11-25 revision: tools/call takes a task; list and cancel served. */
export const TASKS_CAPABILITY_2025: NonNullable<ServerCapabilities["tasks"]> = {
  list: {},
  cancel: {},
  requests: { tools: { call: {} } },
};

/** How a tool that can hand back a task lists it (the 2025-11-25 `execution`, stripped from 2026-07-28 answers). */
export const TASK_EXECUTION = { taskSupport: "optional" } as const;

/** Whether this server's connection is on the 2025-11-25 revision, the one that has this form. */
export function serves2025Tasks(server: McpServer): boolean {
  const version = server.server.getNegotiatedProtocolVersion() ?? "";
  return version >= FROM && version < UNTIL;
}

/** Whether this `tools/call` asked for a task in this form (`params.task`) on a connection that has it. */
export function asks2025Task(server: McpServer, params: unknown): boolean {
  if (!serves2025Tasks(server) || !isTaskAugmentedRequestParams(params)) return false;
  return typeof params.task === "object" && params.task !== null;
}

/** A task in this form: `ttl` and `pollInterval` for `ttlMs` and `pollIntervalMs`, nothing inlined. */
export function task2025(task: Task | DetailedTask): Task2025 {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttl: task.ttlMs,
    ...(task.pollIntervalMs === undefined ? {} : { pollInterval: task.pollIntervalMs }),
  };
}

/**
 * What the `tools/call` answers: the task, and a text block beside it, since the SDK's 2025-11-25
 * check of a tools/call answer refuses one that carries `task` without `content`.
 */
export function created2025(
  task: Task,
): CreateTaskResult2025 & { content: { type: "text"; text: string }[] } {
  return {
    task: task2025(task),
    content: [
      {
        type: "text",
        text: `Started as MCP task ${task.taskId}: its result comes with tasks/result.`,
      },
    ],
  };
}

/** `tasks/get`, `tasks/result`, `tasks/cancel` of another revision: as if this form did not exist. */
export function methodNotFound(method: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.MethodNotFound, `Method not found: ${method}`);
}

/** `params` of `tasks/list`: an opaque cursor from the previous page. */
export const ListParams = z.looseObject({ cursor: z.string().max(256).optional() });
