/**
 * One tools/call as define-tool.ts answers it: the arguments checked (unknown ones named, bounds
 * in words), the tool's code loaded once and run, the result scrubbed of the key and held to its
 * output schema, and the call's delivery hooks handed to the channel. Imported on the first
 * tools/call, so that a start answers tools/list without it.
 */
import type { CallToolResult, McpServer, ServerContext } from "@modelcontextprotocol/server";
import { argumentErrors } from "../client/parse-or-throw.js";
import { ArgumentError, allArgumentErrors } from "../shared/local-refusals.js";
import { scrubDeep } from "../shared/scrub.js";
import { type DeliveryHooks, type Engine, toolContext } from "./context.js";
import type { DeliveryChannel } from "./delivery.js";
import { stepByKey } from "./next-steps.js";
import { errorResult, guard } from "./results.js";
import type { ToolDefinition, ToolEntry, ToolOutcome } from "./tool-types.js";

/**
 * The rule the SDK keeps for a tool with an output schema (its `validateToolOutput`, which this
 * handler replaces): a result that is not an error (nor a question to the user, nor a task handed
 * back in either form, src/calls/mcp-task/mcp-task-background.ts) carries structuredContent.
 */
function withStructure(name: string, result: ToolOutcome): ToolOutcome {
  const r = result as CallToolResult & { resultType?: string; task?: unknown };
  const handedBack = r.resultType !== undefined || r.task !== undefined;
  if (r.isError === true || handedBack || r.structuredContent !== undefined) return result;
  return errorResult(new Error(`${name} has an output schema but returned no structuredContent`));
}

/** Unknown arguments are named, with the ones the tool accepts, rather than dropped. */
function unknownArguments(def: ToolDefinition, args: Record<string, unknown>): ArgumentError[] {
  const known = Object.keys(def.inputSchema.shape);
  const unknown = Object.keys(args).filter((k) => !known.includes(k));
  if (unknown.length === 0) return [];
  const which = `unknown argument${unknown.length > 1 ? "s" : ""}; ${def.name} accepts only ${known.join(", ")}`;
  return [new ArgumentError(unknown.join(", "), which)];
}

/**
 * The arguments as the tool's schema parses them, or one refusal naming every error: the tool's
 * own first checks (an unknown model, judged from the catalog) first, then the schema's.
 */
async function parseArguments(def: ToolDefinition, args: Record<string, unknown>, engine: Engine) {
  const unknown = unknownArguments(def, args);
  const result = def.inputSchema.safeParse(args);
  if (result.success && unknown.length === 0) return result.data;
  const first = (await def.precheck?.(args, engine)) ?? [];
  // The strict schema's own "unknown field(s)" says less than unknownArguments: left out.
  const schema = result.success ? [] : argumentErrors(result.error).filter((e) => e.field !== "(input)");
  throw allArgumentErrors([...first, ...unknown, ...schema]);
}

/** Each tool's code once loaded: a dynamic import() again on every call costs its module-map lookup. */
const LOADED = new WeakMap<ToolEntry, ToolDefinition>();
async function loadOnce(tool: ToolEntry): Promise<ToolDefinition> {
  const def = await tool.load();
  LOADED.set(tool, def);
  return def;
}

/** One call: checked, run, scrubbed of the key, its delivery hooks handed to the channel. */
export async function callTool(
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
    const parsed = await parseArguments(def, args, engine);
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
    // A failed generation is an error that still carries its task: the service took the key.
    const reachedService = tool.listed.annotations.openWorldHint !== false;
    const tookKey = !("isError" in result && result.isError) || "structuredContent" in result;
    if (reachedService && tookKey) channel.succeeded(id);
    channel.expect(id, hooks.pending);
  } else {
    // A transport that passes no channel (an in-process pair) hands the result straight to its
    // client: returning it is the delivery.
    for (const hook of hooks.pending) await hook(true);
  }
  return result;
}
