/**
 * Tools are data: `defineTool({...})` in tools/*.ts, answered here. Arguments are
 * validated by us, not by the SDK, so a refusal is an `INVALID_ARGUMENT` result naming
 * the field and the limit (the SDK's would read `MCP error -32602 …`), while tools/list
 * advertises the strict JSON schema of the zod definition (precomputed in tools/catalog.ts,
 * which a test keeps equal to the definitions). Each server answers tools/call with one handler
 * over a tool table every server shares: a server per HTTP session costs one closure for its
 * tools, not a registration per tool. The handler also hands each call's delivery hooks to the
 * channel its server was built with (see delivery.ts), which settles them once the result was
 * written to a live client, or lost. The call itself runs in tool-call.ts.
 */

import {
  isInputRequiredResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/server";
import type { z } from "zod";
import { lazy } from "../shared/lazy.js";
import type { Engine } from "./context.js";
import type { DeliveryChannel } from "./delivery.js";
import { advertisedSchema } from "./json-schema.js";
import { asks2025Task } from "./mcp-task-wire-2025.js";
import type { ListedTool, ToolDefinition, ToolEntry, ToolOutcome } from "./tool-types.js";

export type { Hints, ListedTool, ToolDefinition, ToolEntry, ToolOutcome } from "./tool-types.js";

/** Identity function that fixes the argument type of `handler` from `inputSchema`. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}

/** A tool only an MCP Apps view calls (`_meta.ui.visibility` without "model"): hosts hide it from the model. */
export function appOnly(meta: Record<string, unknown> | undefined): boolean {
  const visibility = (meta?.ui as { visibility?: unknown } | undefined)?.visibility;
  return Array.isArray(visibility) && !visibility.includes("model");
}

/**
 * An app-only tool is listed with an open object for its input and no output schema: its one
 * caller is the media viewer, built with it, and every client that declares MCP Apps pays for each
 * listed byte of a tools/list held to 20,000 (docs/architecture.md#the-tool-catalog). Its arguments
 * are checked against its zod schema as strictly as any tool's, with the same refusals.
 */
export function listing(def: ToolDefinition): ListedTool {
  const lean = appOnly(def.meta);
  return {
    name: def.name,
    title: def.title,
    description: def.description,
    inputSchema: lean ? { type: "object" } : advertisedSchema(def.inputSchema, "input"),
    ...(lean ? {} : { outputSchema: advertisedSchema(def.outputSchema, "output") }),
    annotations: def.annotations,
    ...(def.execution === undefined ? {} : { execution: def.execution }),
    ...(def.meta === undefined ? {} : { _meta: def.meta }),
  };
}

/**
 * How a call runs (tool-call.ts: checks, the tool's code, scrubbing, delivery), imported on the
 * first tools/call rather than with every server: a start answers tools/list without it.
 */
const toolCalls = lazy(() => import("./tool-call.js"));

/**
 * Answers tools/call on `server` for the tools of `table` (by name), over `engine`. `channel` is
 * where the server's transport settles delivery (none: an in-process pair, where returning is
 * delivering). tools/list is answered apart, from the precomputed listings (surface/assemble.ts).
 */
export function answerToolCalls(
  server: McpServer,
  engine: Engine,
  table: ReadonlyMap<string, ToolEntry>,
  channel?: DeliveryChannel,
  settle2025?: (engine: Engine, outcome: ToolOutcome) => Promise<ToolOutcome>,
): void {
  server.server.setRequestHandler("tools/call", async (request, ctx) => {
    const { name, arguments: raw } = request.params;
    const tool = table.get(name);
    // As the SDK answers a name it does not know: a protocol error, not a tool result.
    if (tool === undefined)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
    // The 2025-11-25 form asks for a task in params.task, and only of a tool listed as taking one.
    const asksTask = tool.listed.execution !== undefined && asks2025Task(server, request.params);
    const { callTool } = await toolCalls();
    const result = await callTool(server, engine, tool, raw, ctx, channel, asksTask);
    // Asked for a 2025-11-25 task and answered without one (refused before the claim): a task
    // completed with that answer, the form the SDK 1.x tasks client reads (`settle2025`).
    // A store that cannot take even that (it may be why the call was refused) leaves the plain answer.
    if (asksTask && !("task" in result) && settle2025 !== undefined) {
      const settled = await settle2025(engine, result).catch(() => undefined);
      if (settled !== undefined) return settled as never;
    }
    // A question (input_required) and a task handed back (resultType "task") pass as they are: the
    // projection only reshapes structuredContent, which neither carries.
    return isInputRequiredResult(result)
      ? result
      : server.server.projectCallToolResult(result, tool.listed.outputSchema);
  });
}
