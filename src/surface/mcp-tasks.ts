/**
 * The requests of the MCP Tasks extension (2026-07-28, src/mcp/task-wire.ts) for the tasks paid
 * calls hand back (src/calls/background.ts), kept in the ledger's store (src/mcp/task-store.ts).
 * Registered with explicit schemas, the SDK 2.4 seam its draft Tasks runtime uses too
 * (typescript-sdk PR #2782), so that runtime can take these over when it ships.
 *
 * - `tasks/get` reads the task. Whichever process serves it also drives it forward: when the work's
 *   lease lapsed (its process stopped), this one takes it over (src/calls/resume.ts); when this
 *   process reads the service's task within moments, the answer waits for that read. A completed
 *   result counts as delivered once this answer reached the client (docs/idempotency.md#delivery).
 * - `tasks/cancel` stops the waiting; the service has no cancellation, and the task then says what
 *   goes on and is charged (src/calls/task-record.ts). Acknowledged for any ID, as SEP-2663 asks.
 * - `tasks/update`: no task of ours asks for input; acknowledged.
 * Each requires the request to declare the extension (-32021), and finds only tasks of the key
 * behind the request: another key's task answers exactly as an unknown one (-32602).
 */
import type { McpServer, ServerContext } from "@modelcontextprotocol/server";
import { beforeRead, drives, stopAll, stopWaiting } from "../calls/background.js";
import { takeOver } from "../calls/resume.js";
import { contextOf, taskStore } from "../calls/task-record.js";
import type { Engine } from "../mcp/context.js";
import type { DeliveryChannel } from "../mcp/delivery.js";
import type { DetailedTask } from "../mcp/task-wire.js";
import { requireTasks, TaskIdParams, taskNotFound } from "../mcp/task-wire.js";

/**
 * The process stops: the tasks it drives give up their leases, so the next `tasks/get` (after a
 * restart, or on another replica) takes their work over at once.
 */
export const stopTasks = stopAll;

/** `channel`: where this server's transport settles delivery (none: returning is delivering). */
export function registerTasks(server: McpServer, engine: Engine, channel?: DeliveryChannel): void {
  server.server.setRequestHandler("tasks/get", { params: TaskIdParams }, async (params, ctx) => {
    requireTasks(server, ctx, "tasks/get");
    const read = await readTask(engine, params.taskId);
    if (read === undefined) throw taskNotFound();
    if (read.delivers !== undefined) onDelivered(engine, ctx, channel, read.delivers);
    return { ...read.task };
  });
  server.server.setRequestHandler("tasks/update", { params: TaskIdParams }, async (_params, ctx) => {
    requireTasks(server, ctx, "tasks/update");
    return {};
  });
  server.server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, async (params, ctx) => {
    requireTasks(server, ctx, "tasks/cancel");
    const store = await taskStore(engine);
    // Only this key's task: another key's cancel is acknowledged and reaches nothing.
    if (await store.cancel(params.taskId, { principal: engine.keyHash })) stopWaiting(params.taskId);
    return {};
  });
}

/** The task as it stands, driven forward where nobody drives it; `delivers`: the identity its result delivers. */
async function readTask(
  engine: Engine,
  taskId: string,
): Promise<{ task: DetailedTask; delivers?: string } | undefined> {
  const store = await taskStore(engine);
  await beforeRead(taskId);
  let rec = await store.read(taskId, engine.keyHash);
  if (rec === undefined) return undefined;
  const lapsed = rec.lease === undefined || rec.lease.until <= Date.now();
  if (rec.status === "working" && lapsed && !drives(taskId) && (await takeOver(engine, rec))) {
    rec = (await store.read(taskId, engine.keyHash)) ?? rec;
  }
  const context = contextOf(rec);
  const delivers = rec.status === "completed" && context.deliverable === true ? context.identity : undefined;
  return { task: store.detailed(rec), ...(delivers === undefined ? {} : { delivers }) };
}

/** Once the transport wrote this answer to a live client, the request's result is delivered. */
function onDelivered(
  engine: Engine,
  ctx: ServerContext,
  channel: DeliveryChannel | undefined,
  identity: string,
): void {
  const mark = async (delivered: boolean) => {
    if (delivered) await engine.ledger.markDelivered(engine.keyHash, identity, true).catch(() => {});
  };
  if (channel === undefined) void mark(true);
  else channel.expect(ctx.mcpReq.id, [mark]);
}
