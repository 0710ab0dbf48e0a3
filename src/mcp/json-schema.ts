/**
 * The JSON Schema that tools/list advertises for a zod schema: what the SDK would derive (same
 * target, same object wrapping), less the keywords that say nothing. Every assistant reads these
 * schemas on every turn, so bytes that carry no rule are left out:
 * - `$schema`: MCP takes JSON Schema 2020-12 as the default dialect, and it is the one zod targets;
 * - `additionalProperties: {}` and `items: {}` (any extra property, any item: the defaults);
 * - `propertyNames: {type: "string"}` (every JSON property name is a string);
 * - `properties: {}` (constrains nothing);
 * - `minimum`/`maximum` at ±Number.MAX_SAFE_INTEGER (zod's bounds of any `.int()`: no value a caller
 *   sends comes near them);
 * - in an output schema, `additionalProperties: false` (zod's mark of a plain object's output): no
 *   result carries an undeclared field, but saying so would make a field added in a later version
 *   fail a client that validates against a list it holds from before, and it costs some 320 bytes
 *   of a tools/list held to 20,000 for every client (docs/architecture.md#the-tool-catalog).
 *   `required` is kept: it says which fields every result carries (test/mcp/json-schema.test.ts
 *   holds each advertised output schema to it);
 * - `default: {}` and `default: []` (an object or list left out is empty: what anyone would assume);
 * and an open union `anyOf: [{type: T, enum: […]}, {type: T}]` (known values, or any other) is
 * written `{type: T}`, which accepts the same values.
 * A nullable is `anyOf: [{type: T, …}, {type: "null"}]` (a type array is split so): `type: [T, "null"]`
 * accepts the same values, but hosts that convert tool schemas for their models (the MCP Inspector's
 * `--strict` mode warns of them) do not take type arrays. test/mcp/json-schema.test.ts holds every
 * tool's advertised schemas to that: no type arrays, and every property typed.
 */
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import type { z } from "zod";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const SUBSCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "dependentSchemas"]);
const SUBSCHEMA_LISTS = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);

function says(keyword: string, value: unknown, io: "input" | "output"): boolean {
  if (keyword === "$schema") return false;
  if (keyword === "maximum" && value === Number.MAX_SAFE_INTEGER) return false;
  if (keyword === "minimum" && value === -Number.MAX_SAFE_INTEGER) return false;
  if (io === "output" && keyword === "additionalProperties" && value === false) return false;
  if (keyword === "default" && (Array.isArray(value) || isObject(value)) && Object.keys(value).length === 0)
    return false;
  if (keyword === "properties" && isObject(value) && Object.keys(value).length === 0) return false;
  const empty = isObject(value) && Object.keys(value).length === 0;
  if ((keyword === "additionalProperties" || keyword === "items") && empty) return false;
  if (keyword === "propertyNames" && isObject(value) && Object.keys(value).length === 1)
    return value.type !== "string";
  return true;
}

/** Keywords about the whole value, kept beside the branches when a type array is split. */
const ANNOTATIONS = new Set(["description", "title", "default", "examples", "deprecated", "readOnly"]);

/**
 * `{type: [A, "null"], …}` (zod writes some nullables so) as `anyOf` of one branch per type: the
 * same values, in the form every host takes. Type-specific keywords go to the non-null branches.
 */
function splitTypeArray(schema: Json): Json {
  if (!Array.isArray(schema.type)) return schema;
  const top: Json = {};
  const rules: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "type") continue;
    (ANNOTATIONS.has(k) ? top : rules)[k] = v;
  }
  const branches = schema.type.map((t) => (t === "null" ? { type: t } : { type: t, ...rules }));
  return { anyOf: branches, ...top };
}

/** A schema without the keywords above, at any depth; values that are data (enum, const, default) are kept as they are. */
export function compactSchema(schema: Json, io: "input" | "output" = "input"): Json {
  const out: Json = {};
  const compact = (sub: Json) => compactSchema(sub, io);
  for (const [keyword, value] of Object.entries(schema)) {
    if (!says(keyword, value, io)) continue;
    if (SUBSCHEMA_MAPS.has(keyword) && isObject(value)) {
      out[keyword] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, isObject(sub) ? compact(sub) : sub]),
      );
    } else if (SUBSCHEMA_LISTS.has(keyword) && Array.isArray(value)) {
      out[keyword] = value.map((sub) => (isObject(sub) ? compact(sub) : sub));
    } else if (["items", "additionalProperties", "not", "contains", "propertyNames"].includes(keyword)) {
      out[keyword] = isObject(value) ? compact(value) : value;
    } else {
      out[keyword] = value;
    }
  }
  return splitTypeArray(mergeOpenUnion(out));
}

/** `anyOf` branches of one type, one of them that bare type: the union accepts exactly that type. */
function mergeOpenUnion(schema: Json): Json {
  const branches = schema.anyOf;
  if (!Array.isArray(branches) || !branches.every(isObject)) return schema;
  const bare = branches.find((b) => Object.keys(b).length === 1 && typeof b.type === "string");
  if (bare === undefined || !branches.every((b) => b.type === bare.type)) return schema;
  const { anyOf: _, ...rest } = schema;
  return { type: bare.type, ...rest };
}

/** The JSON Schema the SDK would derive from a zod schema (same target, same object wrapping). */
export function derivedSchema(schema: z.ZodType, io: "input" | "output"): Json {
  const std = schema["~standard"] as unknown as StandardSchemaWithJSON["~standard"];
  const json = std.jsonSchema[io]({ target: "draft-2020-12" });
  return json.type === undefined ? { type: "object", ...json } : json;
}

/** The advertised JSON Schema of a tool's input or output. */
export function advertisedSchema(schema: z.ZodType, io: "input" | "output"): Json {
  return compactSchema(derivedSchema(schema, io), io);
}
