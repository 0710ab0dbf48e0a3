import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { advertisedSchema, compactSchema, derivedSchema } from "../../src/mcp/json-schema.js";
import { loadTools } from "../../src/tools/all-tools.js";
import { CATALOG } from "../../src/tools/catalog.js";
import { portabilityProblems } from "../helpers/schemas.js";

type Json = Record<string, unknown>;

const ajv = new AjvJsonSchemaValidator();
const verdict = (schema: Json, value: unknown): boolean => ajv.getValidator(schema)(value).valid;

const asset = { id: "a1", kind: "image", mimeType: "image/png", url: "https://cdn.example/x.png" };
const task = {
  id: "t1",
  status: "succeeded",
  quotedGems: 4,
  chargedGems: 4,
  releasedGems: 0,
  error: null,
  outputs: [{ index: 0, status: "succeeded", asset }],
};
/** Values that a compacted schema must judge exactly as the SDK's derived schema does. */
const SAMPLES: unknown[] = [
  {},
  null,
  "text",
  { task, terminal: true },
  { task: { ...task, error: { code: "X", message: "m" } }, terminal: true },
  { task: { ...task, error: "broken" }, terminal: true },
  { task: { ...task, outputs: [{ index: 0, status: "queued", asset: null }] }, terminal: false },
  { task: { ...task, outputs: [{ index: 0, status: "queued", asset: { id: 1 } }] }, terminal: false },
  { task: { ...task, id: 7 }, terminal: true },
  { task: { ...task, status: "paused" }, terminal: false },
  { task: { ...task, status: 3 }, terminal: false },
  { task: { ...task, outputs: [{ index: 1.5, status: "succeeded", asset }] }, terminal: true },
  { task, terminal: true, extra: 1 },
  { idempotencyKey: "k", created: true, task },
  { idempotencyKey: "k", created: true, task, saved: ["/a"] },
  { idempotencyKey: "k", created: "yes", task },
  { idempotencyKey: "k", id: "c", model: "m", content: "hi", finishReason: null, usage: null },
  { idempotencyKey: "k", id: "c", model: "m", content: "hi", finishReason: "stop", usage: { total: 3 } },
  { idempotencyKey: "k", id: "c", model: "m", content: "hi", finishReason: 3, usage: "x" },
  { models: [{ id: "m", name: "M", kind: "image", capabilities: {} }], accountingPeriod: "2026-11" },
  { voices: [{ id: "v", name: "V" }], page: 1, hasMore: false },
  { asset: { id: "a", kind: "image", state: "ready", url: null } },
  { model: "m", prompt: "p", parameters: { ratio: "1:1" }, wait: 5 },
  { model: "m", prompt: "p", parameters: "ratio" },
  { model: "", prompt: "p" },
  { model: "m", prompt: "p", idempotencyKey: "not valid!" },
  { model: "m", messages: [{ role: "user", content: "hi" }], response_format: { type: "json_object" } },
  { model: "m", messages: [] },
  { taskId: "t1", wait: 700 },
];

/** A schema less the keywords `drop` picks, at any depth (data and property names are kept). */
function without(schema: unknown, drop: (keyword: string, value: unknown) => boolean, map = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => without(s, drop));
  if (typeof schema !== "object" || schema === null) return schema;
  const kept = Object.entries(schema).filter(([k, v]) => map || !drop(k, v));
  const DATA = ["enum", "const", "default", "examples"];
  return Object.fromEntries(
    kept.map(([k, v]) => [k, !map && DATA.includes(k) ? v : without(v, drop, !map && k === "properties")]),
  );
}
/** What an output schema leaves out (see json-schema.ts): `additionalProperties: false`. */
const opened = (s: Json): Json => without(s, (k, v) => k === "additionalProperties" && v === false) as Json;
const unrequired = (s: Json): Json => without(s, (k) => k === "required") as Json;

/** Every `required` in a schema, by the path of the object schema that holds it. */
function requiredAt(schema: unknown, at = "", out = new Map<string, unknown>()): Map<string, unknown> {
  if (Array.isArray(schema)) {
    for (const [i, s] of schema.entries()) requiredAt(s, `${at}[${i}]`, out);
  } else if (typeof schema === "object" && schema !== null) {
    for (const [k, v] of Object.entries(schema)) {
      if (k === "required") out.set(at || "(root)", v);
      else if (k !== "enum" && k !== "const" && k !== "default") requiredAt(v, `${at}/${k}`, out);
    }
  }
  return out;
}

describe("advertised schemas", () => {
  it("judge every input as the SDK's derived schemas do, and every output as they do but for undeclared fields", async () => {
    let refusedForMissingFields = 0;
    for (const def of await loadTools()) {
      for (const io of ["input", "output"] as const) {
        const zod = io === "input" ? def.inputSchema : def.outputSchema;
        const full = derivedSchema(zod, io);
        // An output schema leaves out only `additionalProperties: false` (see json-schema.ts).
        const judged = io === "input" ? full : opened(full);
        const lean = advertisedSchema(zod, io);
        for (const sample of SAMPLES) {
          const what = `${def.name} ${io} ${JSON.stringify(sample)}`;
          expect(verdict(lean, sample), what).toBe(verdict(judged, sample));
          if (io === "output" && !verdict(lean, sample) && verdict(unrequired(judged), sample))
            refusedForMissingFields++;
        }
      }
    }
    // Output samples that lack an always-present field are refused by the advertised schemas.
    expect(refusedForMissingFields).toBeGreaterThan(0);
  });

  it("every advertised output schema requires what each result always carries, at every depth", async () => {
    const tools = new Map(CATALOG.map((t) => [t.name, t]));
    let lists = 0;
    for (const def of await loadTools()) {
      const listed = tools.get(def.name)?.outputSchema;
      const promised = requiredAt(derivedSchema(def.outputSchema, "output"));
      expect(requiredAt(listed), def.name).toEqual(promised);
      lists += promised.size;
      // Every field of the root that is not optional is required, in tools/list as it is answered.
      const shape = def.outputSchema.shape as Record<string, z.ZodType>;
      const always = Object.keys(shape).filter((k) => !shape[k]?.safeParse(undefined).success);
      expect((listed?.required as string[] | undefined) ?? [], def.name).toEqual(always);
    }
    expect(lists).toBeGreaterThan(CATALOG.length);
  });

  it("keep each output field's type and which fields are always there: a wrong type or a missing field is refused", () => {
    const schema = z.object({ n: z.number().int(), s: z.string().nullable(), o: z.string().optional() });
    const lean = advertisedSchema(schema, "output");
    expect(verdict(lean, { n: 1, s: null })).toBe(true);
    expect(verdict(lean, { n: 1, s: null, later: "a field added in a later version" })).toBe(true);
    expect(verdict(lean, { n: "1", s: null })).toBe(false);
    expect(verdict(lean, { n: 1, s: 2 })).toBe(false);
    expect(verdict(lean, { n: 1 })).toBe(false);
    expect(lean).toEqual({
      type: "object",
      properties: {
        n: { type: "integer" },
        s: { anyOf: [{ type: "string" }, { type: "null" }] },
        o: { type: "string" },
      },
      required: ["n", "s"],
    });
  });

  it("leave out what says nothing, and keep property names and data as they are", () => {
    const lean = compactSchema({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        $schema: { type: "string" },
        loose: { type: "object", properties: {}, additionalProperties: {} },
        map: { type: "object", propertyNames: { type: "string" }, additionalProperties: {} },
        maybe: { anyOf: [{ type: "object", properties: { a: { type: "string" } } }, { type: "null" }] },
        choice: { anyOf: [{ type: "string", enum: ["a"] }, { type: "null" }] },
        fixed: { const: { properties: {} } },
        count: { type: "integer", minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
        offset: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
        options: { type: "object", default: {} },
        ids: { type: "array", default: [] },
        mode: { type: "string", default: "a" },
        status: { anyOf: [{ type: "string", enum: ["queued", "done"] }, { type: "string" }] },
        mixed: { anyOf: [{ type: "string", enum: ["a"] }, { type: "number" }] },
      },
      additionalProperties: false,
    });
    expect(lean).toEqual({
      type: "object",
      properties: {
        $schema: { type: "string" },
        loose: { type: "object" },
        map: { type: "object" },
        maybe: { anyOf: [{ type: "object", properties: { a: { type: "string" } } }, { type: "null" }] },
        choice: { anyOf: [{ type: "string", enum: ["a"] }, { type: "null" }] },
        fixed: { const: { properties: {} } },
        count: { type: "integer" },
        offset: { type: "integer", minimum: 0 },
        options: { type: "object" },
        ids: { type: "array" },
        mode: { type: "string", default: "a" },
        status: { type: "string" },
        mixed: { anyOf: [{ type: "string", enum: ["a"] }, { type: "number" }] },
      },
      additionalProperties: false,
    });
  });

  it("split a type array into anyOf branches, type rules in the non-null one, annotations beside", () => {
    expect(compactSchema({ type: ["string", "null"], minLength: 1, description: "A URL." })).toEqual({
      anyOf: [{ type: "string", minLength: 1 }, { type: "null" }],
      description: "A URL.",
    });
  });

  it("keep a described nullable as anyOf with its description, never a type array", () => {
    const schema = z.object({ e: z.looseObject({ code: z.string() }).nullable().describe("An error.") });
    const e = (advertisedSchema(schema, "output").properties as Record<string, unknown>).e;
    expect(e).toEqual({
      anyOf: [
        { type: "object", properties: { code: { type: "string" } }, required: ["code"] },
        { type: "null" },
      ],
      description: "An error.",
    });
  });
});

describe("portable schemas", () => {
  it("every tool's advertised input and output schema has no type array and no untyped property", async () => {
    const problems: string[] = [];
    for (const def of await loadTools()) {
      problems.push(...portabilityProblems(advertisedSchema(def.inputSchema, "input"), `${def.name} input`));
      problems.push(
        ...portabilityProblems(advertisedSchema(def.outputSchema, "output"), `${def.name} output`),
      );
    }
    expect(problems).toEqual([]);
  });

  it("the check finds what the Inspector's --strict mode warns of", () => {
    const found = portabilityProblems(
      {
        type: "object",
        properties: {
          url: { type: ["string", "null"] },
          analysis: {},
          nested: { type: "array", items: { type: "object", properties: { x: { description: "no type" } } } },
          either: { anyOf: [{ type: "string" }, {}] },
          fine: { anyOf: [{ type: "string" }, { type: "null" }] },
        },
      },
      "t",
    );
    expect(found).toEqual([
      't.url: type is an array ["string","null"]',
      "t.analysis: no type",
      "t.nested.items.x: no type",
      "t.either: no type",
    ]);
  });
});
