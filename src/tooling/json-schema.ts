/**
 * The JSON Schema that tools/list advertises for a zod schema: what the SDK would derive (same
 * target, same object wrapping), less the keywords that say nothing. Every assistant reads these
 * schemas on every turn, so bytes that carry no rule are left out:
 * - `$schema`: MCP takes JSON Schema 2020-12 as the default dialect, and it is the one zod targets;
 * - `additionalProperties: {}` (any extra property is allowed: the default);
 * - `propertyNames: {type: "string"}` (every JSON property name is a string).
 */
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import type { z } from "zod";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const SUBSCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "dependentSchemas"]);
const SUBSCHEMA_LISTS = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);

function says(keyword: string, value: unknown): boolean {
  if (keyword === "$schema") return false;
  if (keyword === "additionalProperties" && isObject(value) && Object.keys(value).length === 0) return false;
  if (keyword === "propertyNames" && isObject(value) && Object.keys(value).length === 1)
    return value.type !== "string";
  return true;
}

/** A schema without the keywords above, at any depth; values that are data (enum, const, default) are kept as they are. */
export function compactSchema(schema: Json): Json {
  const out: Json = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (!says(keyword, value)) continue;
    if (SUBSCHEMA_MAPS.has(keyword) && isObject(value)) {
      out[keyword] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, isObject(sub) ? compactSchema(sub) : sub]),
      );
    } else if (SUBSCHEMA_LISTS.has(keyword) && Array.isArray(value)) {
      out[keyword] = value.map((sub) => (isObject(sub) ? compactSchema(sub) : sub));
    } else if (["items", "additionalProperties", "not", "contains", "propertyNames"].includes(keyword)) {
      out[keyword] = isObject(value) ? compactSchema(value) : value;
    } else {
      out[keyword] = value;
    }
  }
  return out;
}

/** The advertised JSON Schema of a tool's input or output. */
export function advertisedSchema(schema: z.ZodType, io: "input" | "output"): Json {
  const std = schema["~standard"] as unknown as StandardSchemaWithJSON["~standard"];
  const json = std.jsonSchema[io]({ target: "draft-2020-12" });
  return compactSchema(json.type === undefined ? { type: "object", ...json } : json);
}
