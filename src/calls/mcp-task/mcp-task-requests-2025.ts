/**
 * The requests of MCP Tasks in its 2025-11-25 form (src/mcp/mcp-task-wire-2025.ts), on the tasks the
 * 2026-07-28 extension serves too (mcp-task-requests.ts): the same store, the same work, the same key
 * boundary (another key's task answers exactly as an unknown one, -32602). Only the shapes differ,
 * and where the result goes: `tasks/get` answers the task alone, `tasks/result` waits for the end
 * and answers the tool's own result (delivered once it reached the client), `tasks/list` pages
 * through the key's tasks, and `tasks/cancel` answers the task, cancelled, saying what goes on and
 * is charged (the service has no cancellation, src/calls/mcp-task/mcp-task-record.ts).
 */
import {
  type CallToolResult,
  type CancelTaskResult,
  type GetTaskPayloadResult,
  type GetTaskResult,
  type ListTasksResult,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { sleep } from "../../client/backoff.js";
import type { Engine } from "../../mcp/context.js";
import type { DeliveryChannel } from "../../mcp/delivery.js";
import { taskNotFound } from "../../mcp/mcp-task-wire.js";
import { task2025 } from "../../mcp/mcp-task-wire-2025.js";
import { stopWaiting } from "./mcp-task-background.js";
import { onDelivered, readTask } from "./mcp-task-read.js";
import type { Resumable } from "./mcp-task-record.js";
import { taskStore } from "./mcp-task-record.js";
import { isTerminalTask } from "./mcp-task-store.js";

/** Tasks per `tasks/list` page. */
const PAGE = 50;
/** The longest a `tasks/result` sleeps between two reads, whatever `pollInterval` says. */
const RESULT_NAP_MS = 5_000;

export async function get2025(engine: Engine, taskId: string, resumable: Resumable): Promise<GetTaskResult> {
  const read = await readTask(engine, taskId, resumable);
  if (read === undefined) throw taskNotFound();
  return task2025(read.task);
}

/**
 * Waits until the task ends, reading it as a poller honouring `pollInterval` would (each read
 * drives it forward and is held for this process's next read of the service), then answers the
 * tool's result with the task named in its `_meta`.
 */
export async function result2025(
  engine: Engine,
  taskId: string,
  ctx: ServerContext,
  channel: DeliveryChannel | undefined,
  resumable: Resumable,
): Promise<GetTaskPayloadResult> {
  // Hurried (the server stops, or the client left): stop waiting; the task itself goes on.
  const id = ctx.mcpReq.id;
  const signal =
    channel === undefined ? ctx.mcpReq.signal : AbortSignal.any([ctx.mcpReq.signal, channel.hurry(id)]);
  for (;;) {
    const read = await readTask(engine, taskId, resumable);
    if (read === undefined) throw taskNotFound();
    const { task } = read;
    const related = { [RELATED_TASK_META_KEY]: { taskId } };
    if (task.status === "completed") {
      if (read.delivers !== undefined) onDelivered(engine, ctx, channel, read.delivers);
      const result = (task.result ?? { content: [] }) as CallToolResult;
      return { ...result, _meta: { ...(result._meta ?? {}), ...related } };
    }
    if (task.status === "failed") {
      const error = task.error ?? { code: ProtocolErrorCode.InternalError, message: "The task failed" };
      throw new ProtocolError(error.code, error.message, error.data);
    }
    if (task.status === "cancelled") {
      // No result will come: what the cancel said (the work sent goes on and is charged) instead.
      const text = task.statusMessage ?? "Stopped waiting at your request.";
      return { content: [{ type: "text", text }], isError: true, _meta: related };
    }
    await sleep(Math.min(task.pollIntervalMs ?? RESULT_NAP_MS, RESULT_NAP_MS), signal).catch(() => {
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `Stopped waiting for task ${taskId}, which goes on: ask tasks/result again.`,
      );
    });
  }
}

export async function list2025(engine: Engine, cursor: string | undefined): Promise<ListTasksResult> {
  const store = await taskStore(engine);
  const page = await store.list(engine.keyHash, cursor, PAGE);
  if (page === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid cursor");
  const tasks = page.tasks.map((rec) => task2025(store.detailed(rec)));
  return { tasks, ...(page.next === undefined ? {} : { nextCursor: page.next }) };
}

/** Cancels the key's task that is still working; a finished one is refused (-32602), as the form asks. */
export async function cancel2025(engine: Engine, taskId: string): Promise<CancelTaskResult> {
  const store = await taskStore(engine);
  const before = await store.read(taskId, engine.keyHash);
  if (before === undefined) throw taskNotFound();
  const terminal = (status: string) =>
    new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Task ${taskId} is already ${status}: it cannot be cancelled`,
    );
  if (isTerminalTask(before.status)) throw terminal(before.status);
  await store.cancel(taskId, { principal: engine.keyHash });
  const after = await store.read(taskId, engine.keyHash);
  if (after === undefined) throw taskNotFound();
  // It ended on its own before the cancel was written: its own end stands.
  if (after.status !== "cancelled") throw terminal(after.status);
  stopWaiting(taskId);
  return task2025(store.detailed(after));
}
