import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { advertisedSchema, compactSchema, derivedSchema } from "../../src/mcp/json-schema.js";
import { loadTools } from "../../src/tools/all-tools.js";

const ajv = new AjvJsonSchemaValidator();
const verdict = (schema: Record<string, unknown>, value: unknown): boolean =>
  ajv.getValidator(schema)(value).valid;

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

describe("advertised schemas", () => {
  it("judge every input as the SDK's derived schemas do, and accept every output they accept", async () => {
    let refusedOnlyByPromises = 0;
    for (const def of await loadTools()) {
      for (const io of ["input", "output"] as const) {
        const zod = io === "input" ? def.inputSchema : def.outputSchema;
        const full = derivedSchema(zod, io);
        const lean = advertisedSchema(zod, io);
        for (const sample of SAMPLES) {
          const what = `${def.name} ${io} ${JSON.stringify(sample)}`;
          // An output schema keeps what it says of each field, not the server's promises of which
          // fields it always sends and no others: what the SDK accepts, it accepts.
          if (io === "output" && !verdict(full, sample)) {
            if (verdict(lean, sample)) refusedOnlyByPromises++;
            continue;
          }
          expect(verdict(lean, sample), what).toBe(verdict(full, sample));
        }
      }
    }
    expect(refusedOnlyByPromises).toBeGreaterThan(0);
  });

  it("keep each output field's type: a wrong type is still refused", () => {
    const schema = z.object({ n: z.number().int(), s: z.string().nullable() });
    const lean = advertisedSchema(schema, "output");
    expect(verdict(lean, { n: 1, s: null })).toBe(true);
    expect(verdict(lean, { n: "1", s: null })).toBe(false);
    expect(verdict(lean, { n: 1, s: 2 })).toBe(false);
    expect(lean).toEqual({
      type: "object",
      properties: { n: { type: "integer" }, s: { type: ["string", "null"] } },
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
        maybe: { type: ["object", "null"], properties: { a: { type: "string" } } },
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

  it("merge a described nullable into one schema that keeps the description", () => {
    const schema = z.object({ e: z.looseObject({ code: z.string() }).nullable().describe("An error.") });
    const e = (advertisedSchema(schema, "output").properties as Record<string, unknown>).e;
    expect(e).toEqual({
      type: ["object", "null"],
      properties: { code: { type: "string" } },
      description: "An error.",
    });
  });
});
