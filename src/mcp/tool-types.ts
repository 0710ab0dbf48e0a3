/**
 * The shapes of a tool: its definition (tools/*.ts, through define-tool.ts's defineTool), what
 * tools/list shows of it, and the entry servers answer it from. Apart from define-tool.ts so that
 * tool-call.ts, which define-tool.ts imports on the first call, can name them.
 */
import type { CallToolResult, InputRequiredResult, ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { ArgumentError } from "../shared/local-refusals.js";
import type { Engine, ToolContext } from "./context.js";
import type { TASK_EXECUTION } from "./mcp-task-wire-2025.js";

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
  /**
   * Run only when the schema refused the arguments: the tool's checks that must come first (the
   * catalog's verdict on an unknown model), so one refusal names them first and every schema error
   * beside them (src/mcp/tool-call.ts).
   */
  precheck?(raw: Record<string, unknown>, engine: Engine): Promise<ArgumentError[]>;
}

/** What tools/list shows of a tool. tools/catalog.ts holds these, precomputed, for a cheap start. */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Left out for an app-only tool (see `listing` in define-tool.ts). */
  outputSchema?: Record<string, unknown>;
  annotations: ToolAnnotations;
  execution?: typeof TASK_EXECUTION;
  _meta?: Record<string, unknown>;
}

/** A tool as servers answer it: its listing, and its code (zod schemas, handler), loaded on first call. */
export interface ToolEntry {
  listed: ListedTool;
  load: () => Promise<ToolDefinition>;
}
