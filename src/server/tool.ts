/**
 * Tools are data: `defineTool({...})` in tools/*.ts, registered here. Arguments are
 * validated by us, not by the SDK, so a refusal is an `INVALID_ARGUMENT` result naming
 * the field and the limit (the SDK's would read `MCP error -32602 …`), while tools/list
 * still advertises the strict JSON schema of the zod definition.
 */
import type {
  CallToolResult,
  InputRequiredResult,
  McpServer,
  ServerContext,
  StandardSchemaWithJSON,
  ToolAnnotations,
} from "@modelcontextprotocol/server";
import type { z } from "zod";
import { ArgumentError } from "../service/errors.js";
import { parseOrThrow } from "../service/schemas.js";
import { type Engine, type ToolContext, toolContext } from "./context.js";
import { guard } from "./results.js";

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
  handler(args: z.output<S>, ctx: ToolContext, engine: Engine): Promise<ToolOutcome>;
}

/** Identity function that fixes the argument type of `handler` from `inputSchema`. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}

/**
 * Advertises `schema`'s JSON Schema but accepts any value, so validation failures reach
 * our handler instead of becoming the SDK's generic error text. The JSON is converted
 * once, on the first tools/list, not at startup.
 */
function advertiseOnly(schema: z.ZodType): StandardSchemaWithJSON {
  const std = schema["~standard"] as unknown as StandardSchemaWithJSON["~standard"];
  const cache = new Map<string, Record<string, unknown>>();
  const convert = (io: "input" | "output") => (o: { target: string }) => {
    const key = `${io}:${o.target}`;
    let json = cache.get(key);
    if (!json) {
      json = std.jsonSchema[io](o as Parameters<typeof std.jsonSchema.input>[0]);
      cache.set(key, json);
    }
    return json;
  };
  return {
    "~standard": {
      vendor: std.vendor,
      version: 1,
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: convert("input"), output: convert("output") },
    },
  };
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

export function registerTool(server: McpServer, engine: Engine, def: ToolDefinition): void {
  server.registerTool(
    def.name,
    {
      title: def.title,
      description: def.description,
      inputSchema: advertiseOnly(def.inputSchema),
      outputSchema: advertiseOnly(def.outputSchema),
      annotations: { title: def.title, ...def.annotations },
    },
    (async (raw: unknown, ctx: ServerContext) =>
      guard(async () => {
        if (raw !== undefined && (raw === null || typeof raw !== "object" || Array.isArray(raw))) {
          throw new ArgumentError("arguments", "must be an object");
        }
        const args = (raw ?? {}) as Record<string, unknown>;
        refuseUnknown(def, args);
        const parsed = parseOrThrow(def.inputSchema, args);
        return def.handler(parsed, toolContext(server, ctx), engine);
      })) as never,
  );
}
