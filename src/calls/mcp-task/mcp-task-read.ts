/**
 * Reading a task for either form of MCP Tasks (mcp-task-requests.ts, mcp-task-requests-2025.ts): the read drives
 * the task forward where nobody does (its process stopped: this one takes the work over,
 * src/calls/mcp-task/mcp-task-resume.ts) and waits for this process's next read of the service when it is moments
 * away; and a result handed to the client counts as delivered once the answer reached it
 * (docs/idempotency.md#delivery).
 */
import type { ServerContext } from "@modelcontextprotocol/server";
import type { Engine } from "../../mcp/context.js";
import type { DeliveryChannel } from "../../mcp/delivery.js";
import type { DetailedTask } from "../../mcp/mcp-task-wire.js";
import { beforeRead, drives } from "./mcp-task-background.js";
import { contextOf, type Resumable, taskStore } from "./mcp-task-record.js";
import { takeOver } from "./mcp-task-resume.js";

/**
 * The task as it stands, driven forward where nobody drives it; `delivers`: the identity its result
 * delivers. `hold: false` (a listen's watch, which hears this process's next read when it lands)
 * skips waiting for that read.
 */
export async function readTask(
  engine: Engine,
  taskId: string,
  resumable: Resumable,
  o: { hold?: boolean } = {},
): Promise<{ task: DetailedTask; delivers?: string } | undefined> {
  const store = await taskStore(engine);
  if (o.hold !== false) await beforeRead(taskId, engine.keyHash);
  let rec = await store.read(taskId, engine.keyHash);
  if (rec === undefined) return undefined;
  const lapsed = rec.lease === undefined || rec.lease.until <= Date.now();
  if (rec.status === "working" && lapsed && !drives(taskId) && (await takeOver(engine, rec, resumable))) {
    rec = (await store.read(taskId, engine.keyHash)) ?? rec;
  }
  const context = contextOf(rec);
  const delivers = rec.status === "completed" && context.deliverable === true ? context.identity : undefined;
  return { task: store.detailed(rec), ...(delivers === undefined ? {} : { delivers }) };
}

/** Once the transport wrote this answer to a live client, the request's result is delivered. */
export function onDelivered(
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
