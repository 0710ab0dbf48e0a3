/**
 * The requests of the MCP Tasks extension (2026-07-28, src/mcp/mcp-task-wire.ts) for the tasks paid
 * calls hand back (src/calls/mcp-task/mcp-task-background.ts), kept in the ledger's store (src/calls/mcp-task/mcp-task-store.ts).
 * Registered with explicit schemas, the SDK 2.4 seam its draft Tasks runtime uses too
 * (typescript-sdk PR #2782), so that runtime can take these over when it ships.
 *
 * - `tasks/get` reads the task. Whichever process serves it also drives it forward: when the work's
 *   lease lapsed (its process stopped), this one takes it over (src/calls/mcp-task/mcp-task-resume.ts); when this
 *   process reads the service's task within moments, the answer waits for that read. A completed
 *   result counts as delivered once this answer reached the client (docs/idempotency.md#delivery).
 * - `tasks/cancel` stops the waiting; the service has no cancellation, and the task then says what
 *   goes on and is charged (src/calls/mcp-task/mcp-task-record.ts). Acknowledged for any ID, as SEP-2663 asks.
 * - `tasks/update`: no task of ours asks for input; acknowledged.
 * Each requires the request to declare the extension (-32021), and finds only tasks of the key
 * behind the request: another key's task answers exactly as an unknown one (-32602).
 * On a 2025-11-25 connection, `tasks/get`, `tasks/cancel`, `tasks/result` and `tasks/list` answer
 * in that revision's form instead (mcp-task-requests-2025.ts); elsewhere the last two do not exist (-32601).
 */

import type { McpServer } from "@modelcontextprotocol/server";
import type { Engine } from "../../mcp/context.js";
import type { ToolOutcome } from "../../mcp/define-tool.js";
import type { DeliveryChannel } from "../../mcp/delivery.js";
import { requireTasks, TaskIdParams, taskNotFound } from "../../mcp/mcp-task-wire.js";
import { ListParams, methodNotFound, serves2025Tasks } from "../../mcp/mcp-task-wire-2025.js";
import { lazy } from "../../shared/lazy.js";
import type { Resumable } from "./mcp-task-record.js";

/**
 * The work behind these requests (reading, taking over and cancelling tasks: the paid-call core of
 * src/calls) is imported on the first of them, not with the server: a start that lists tools and
 * makes no task never loads it (about a tenth of the cold start to tools/list).
 */
const background = lazy(() => import("./mcp-task-background.js"));
const taskRecord = lazy(() => import("./mcp-task-record.js"));
const tasks2025 = lazy(() => import("./mcp-task-requests-2025.js"));
const taskRead = lazy(() => import("./mcp-task-read.js"));

/**
 * The process stops: the tasks it drives give up their leases, so the next `tasks/get` (after a
 * restart, or on another replica) takes their work over at once.
 */
export async function stopTasks(): Promise<void> {
  await (await background()).stopAll();
}

/**
 * `resumable`: how a stored task's work becomes its steps again (src/calls/paid/resumable.ts);
 * `channel`: where this server's transport settles delivery (none: returning is delivering).
 */
/**
 * A call that asked for a 2025-11-25 task and was answered without one (refused before the claim),
 * as a task completed with that answer (mcp-task-background.ts, settled2025): passed to the tool
 * calls' handler (src/mcp/define-tool.ts) by the surface, and loaded only when one happens.
 */
export async function settleAs2025Task(engine: Engine, outcome: ToolOutcome): Promise<ToolOutcome> {
  return (await background()).settled2025(engine, outcome);
}

export function registerTasks(
  server: McpServer,
  engine: Engine,
  resumable: Resumable,
  channel?: DeliveryChannel,
): void {
  server.server.setRequestHandler("tasks/get", { params: TaskIdParams }, async (params, ctx) => {
    if (serves2025Tasks(server)) return (await tasks2025()).get2025(engine, params.taskId, resumable);
    requireTasks(server, ctx, "tasks/get");
    const { readTask, onDelivered } = await taskRead();
    const read = await readTask(engine, params.taskId, resumable);
    if (read === undefined) throw taskNotFound();
    if (read.delivers !== undefined) onDelivered(engine, ctx, channel, read.delivers);
    return { ...read.task };
  });
  server.server.setRequestHandler("tasks/update", { params: TaskIdParams }, async (_params, ctx) => {
    requireTasks(server, ctx, "tasks/update");
    return {};
  });
  server.server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, async (params, ctx) => {
    if (serves2025Tasks(server)) return (await tasks2025()).cancel2025(engine, params.taskId);
    requireTasks(server, ctx, "tasks/cancel");
    const store = await (await taskRecord()).taskStore(engine);
    // Only this key's task: another key's cancel is acknowledged and reaches nothing.
    if (await store.cancel(params.taskId, { principal: engine.keyHash }))
      (await background()).stopWaiting(params.taskId);
    return {};
  });
  server.server.setRequestHandler("tasks/result", { params: TaskIdParams }, async (params, ctx) => {
    if (!serves2025Tasks(server)) throw methodNotFound("tasks/result");
    return (await tasks2025()).result2025(engine, params.taskId, ctx, channel, resumable);
  });
  server.server.setRequestHandler("tasks/list", { params: ListParams }, async (params) => {
    if (!serves2025Tasks(server)) throw methodNotFound("tasks/list");
    return (await tasks2025()).list2025(engine, params.cursor);
  });
}
