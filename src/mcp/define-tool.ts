/**
 * Tools are data: `defineTool({...})` in tools/*.ts, answered here. Arguments are
 * validated by us, not by the SDK, so a refusal is an `INVALID_ARGUMENT` result naming
 * the field and the limit (the SDK's would read `MCP error -32602 …`), while tools/list
 * advertises the strict JSON schema of the zod definition (precomputed in tools/catalog.ts,
 * which a test keeps equal to the definitions). Each server answers tools/call with one handler
 * over a tool table every server shares: a server per HTTP session costs one closure for its
 * tools, not a registration per tool. The handler also hands each call's delivery hooks to the
 * channel its server was built with (see delivery.ts), which settles them once the result was
 * written to a live client, or lost.
 */
import {
  type CallToolResult,
  type InputRequiredResult,
  isInputRequiredResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
  type ToolAnnotations,
} from "@modelcontextprotocol/server";
import type { z } from "zod";
import { ArgumentError } from "../client/local-refusals.js";
import { parseOrThrow } from "../client/parse-or-throw.js";
import { scrubDeep } from "../client/scrub.js";
import { type DeliveryHooks, type Engine, type ToolContext, toolContext } from "./context.js";
import type { DeliveryChannel } from "./delivery.js";
import { advertisedSchema } from "./json-schema.js";
import { stepByKey } from "./next-steps.js";
import { errorResult, guard } from "./results.js";
import { asks2025Task, type TASK_EXECUTION } from "./task-wire-2025.js";

/** All four hints, stated: hosts assume the worst for any left out. */
export type Hints = Required<
  Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint">
>;

export type ToolOutcome = CallToolResult | InputRequiredResult;

export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  /** A strict object (unknown arguments refused by name); every field described. */
  inputSchema: S;
  outputSchema: z.ZodObject;
  annotations: Hints;
  /**
   * The tool may hand back an MCP task (a paid call that goes on in the background, docs/tasks.md):
   * listed for the 2025-11-25 form, which asks for one only of such a tool.
   */
  execution?: typeof TASK_EXECUTION;
  /** `_meta` of the tool in tools/list, such as the viewer link (`ui.resourceUri`, MCP Apps). */
  meta?: Record<string, unknown>;
  handler(args: z.output<S>, ctx: ToolContext, engine: Engine): Promise<ToolOutcome>;
}

/** Identity function that fixes the argument type of `handler` from `inputSchema`. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}

/** What tools/list shows of a tool. tools/catalog.ts holds these, precomputed, for a cheap start. */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Left out for an app-only tool (see `listing`). */
  outputSchema?: Record<string, unknown>;
  annotations: ToolAnnotations;
  execution?: typeof TASK_EXECUTION;
  _meta?: Record<string, unknown>;
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
 * The rule the SDK keeps for a tool with an output schema (its `validateToolOutput`, which this
 * handler replaces): a result that is not an error (nor a question to the user, nor a task handed
 * back in either form, src/calls/background.ts) carries structuredContent.
 */
function withStructure(name: string, result: ToolOutcome): ToolOutcome {
  const r = result as CallToolResult & { resultType?: string; task?: unknown };
  const handedBack = r.resultType !== undefined || r.task !== undefined;
  if (r.isError === true || handedBack || r.structuredContent !== undefined) return result;
  return errorResult(new Error(`${name} has an output schema but returned no structuredContent`));
}

/** Unknown arguments are named, with the ones the tool accepts, rather than dropped. */
function refuseUnknown(def: ToolDefinition, args: Record<string, unknown>): void {
  const known = Object.keys(def.inputSchema.shape);
  const unknown = Object.keys(args).filter((k) => !known.includes(k));
  if (unknown.length > 0) {
    throw new ArgumentError(
      unknown.join(", "),
      `unknown argument${unknown.length > 1 ? "s" : ""}; ${def.name} accepts only ${known.join(", ")}`,
    );
  }
}

/** A tool as servers answer it: its listing, and its code (zod schemas, handler), loaded on first call. */
export interface ToolEntry {
  listed: ListedTool;
  load: () => Promise<ToolDefinition>;
}

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
): void {
  server.server.setRequestHandler("tools/call", async (request, ctx) => {
    const { name, arguments: raw } = request.params;
    const tool = table.get(name);
    // As the SDK answers a name it does not know: a protocol error, not a tool result.
    if (tool === undefined)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
    // The 2025-11-25 form asks for a task in params.task, and only of a tool listed as taking one.
    const asksTask = tool.listed.execution !== undefined && asks2025Task(server, request.params);
    const result = await callTool(server, engine, tool, raw, ctx, channel, asksTask);
    // A question (input_required) and a task handed back (resultType "task") pass as they are: the
    // projection only reshapes structuredContent, which neither carries.
    return isInputRequiredResult(result)
      ? result
      : server.server.projectCallToolResult(result, tool.listed.outputSchema);
  });
}

/** Each tool's code once loaded: a dynamic import() again on every call costs its module-map lookup. */
const LOADED = new WeakMap<ToolEntry, ToolDefinition>();
async function loadOnce(tool: ToolEntry): Promise<ToolDefinition> {
  const def = await tool.load();
  LOADED.set(tool, def);
  return def;
}

/** One call: checked, run, scrubbed of the key, its delivery hooks handed to the channel. */
async function callTool(
  server: McpServer,
  engine: Engine,
  tool: ToolEntry,
  raw: unknown,
  ctx: ServerContext,
  channel: DeliveryChannel | undefined,
  asksTask: boolean,
): Promise<ToolOutcome> {
  const id = ctx.mcpReq.id;
  const signal =
    channel === undefined ? ctx.mcpReq.signal : AbortSignal.any([ctx.mcpReq.signal, channel.hurry(id)]);
  const hooks: DeliveryHooks = { pending: [], signal, ...(asksTask ? { asks2025Task: true } : {}) };
  const scrub = engine.client.scrub;
  const answered = await guard(async () => {
    if (raw !== undefined && (raw === null || typeof raw !== "object" || Array.isArray(raw))) {
      throw new ArgumentError("arguments", "must be an object");
    }
    const def = LOADED.get(tool) ?? (await loadOnce(tool));
    const args = (raw ?? {}) as Record<string, unknown>;
    refuseUnknown(def, args);
    const parsed = parseOrThrow(def.inputSchema, args);
    return def.handler(parsed, toolContext(server, ctx, hooks, scrub), engine);
  }, stepByKey(engine.key.origin));
  // The service may echo the key in any message: no text, structuredContent or _meta carries it.
  const result = withStructure(tool.listed.name, scrubDeep(answered, scrub));
  // A cancelled call gets no response at all, so nothing of it is ever delivered.
  if (ctx.mcpReq.signal.aborted) {
    for (const hook of hooks.pending) void hook(false);
    return result;
  }
  if (channel !== undefined) {
    // Only a tool that reached the service proves the key (list_requests reads local state).
    const reachedService = tool.listed.annotations.openWorldHint !== false;
    if (reachedService && !("isError" in result && result.isError)) channel.succeeded(id);
    channel.expect(id, hooks.pending);
  } else {
    // A transport that passes no channel (an in-process pair) hands the result straight to its
    // client: returning it is the delivery.
    for (const hook of hooks.pending) await hook(true);
  }
  return result;
}
