import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listing } from "../../src/mcp/define-tool.js";
import { loadTools, TOOL_LOADERS } from "../../src/tools/all-tools.js";
import { CATALOG } from "../../src/tools/catalog.js";
import { CONTRACT_TOOLS, READ_ONLY_TOOLS, SPENDING_TOOLS } from "../helpers/tools.js";
import { type Harness, harness, structured } from "./harness.js";

/** What tools/list may cost the model's context, as JSON bytes (docs/architecture.md#the-tool-catalog). */
const CATALOG_BYTES_MAX = 20_000;

type Json = Record<string, unknown>;

const ajv = new AjvJsonSchemaValidator();

/** Paths of properties without a description, at any depth. */
function undescribed(schema: Json, at = ""): string[] {
  const out: string[] = [];
  const props = (schema.properties ?? {}) as Record<string, Json>;
  for (const [name, prop] of Object.entries(props)) {
    const here = at ? `${at}.${name}` : name;
    if (typeof prop.description !== "string" || prop.description.length < 10) out.push(here);
    out.push(...undescribed(prop, here));
    const items = prop.items as Json | undefined;
    if (items && typeof items === "object") out.push(...undescribed(items, `${here}[]`));
  }
  return out;
}

type Listed = Awaited<ReturnType<Harness["mcp"]["listTools"]>>["tools"][number];

/**
 * Whether an assistant reads this tool: MCP Apps hosts hide one whose `_meta.ui.visibility` leaves
 * out "model" (a tool only the media viewer calls).
 */
function modelSees(t: Listed): boolean {
  const visibility = (t._meta?.ui as { visibility?: string[] } | undefined)?.visibility;
  return visibility === undefined || visibility.includes("model");
}

describe("tools/list", () => {
  let h: Harness;
  /** The tools the model reads; the checks below are about them. */
  let tools: Listed[];
  let all: Listed[];
  beforeAll(async () => {
    h = await harness();
    all = (await h.mcp.listTools()).tools;
    tools = all.filter(modelSees);
  });
  afterAll(() => h.close());

  // src/tools/catalog.ts is the reviewed record of what the model reads (npm run check:generated
  // keeps the file equal to the generator's output); the wire must carry exactly it, and any
  // other tool must be one the model never sees.
  it("lists from a catalog equal to the definitions (else: npm run catalog)", async () => {
    expect(CATALOG).toEqual((await loadTools()).map(listing));
    expect(CATALOG.map((t) => t.name)).toEqual(Object.keys(TOOL_LOADERS));
    const catalogued = all.filter((t) => CATALOG.some((c) => c.name === t.name));
    expect(catalogued).toEqual(CATALOG);
    for (const t of all) if (!catalogued.includes(t)) expect(modelSees(t), t.name).toBe(false);
  });

  it(`costs the model at most ${CATALOG_BYTES_MAX} bytes of JSON`, async () => {
    const bytes = Buffer.byteLength(JSON.stringify({ tools }));
    console.warn(`tools/list: ${bytes} bytes of JSON for ${tools.length} tools (bound ${CATALOG_BYTES_MAX})`);
    expect(bytes).toBeLessThanOrEqual(CATALOG_BYTES_MAX);
  });

  it("offers every tool of the README's table", () => {
    const names = tools.map((t) => t.name);
    for (const name of CONTRACT_TOOLS) expect(names).toContain(name);
  });

  it("states all four annotations truthfully", () => {
    for (const t of tools) {
      const a = t.annotations ?? {};
      for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
        expect(typeof a[hint], `${t.name}.${hint}`).toBe("boolean");
      }
      expect(a.readOnlyHint, t.name).toBe(READ_ONLY_TOOLS.has(t.name));
      expect(a.openWorldHint, t.name).toBe(t.name !== "list_requests");
      if (a.readOnlyHint) expect(a.destructiveHint, t.name).toBe(false);
    }
  });

  it("has object schemas with no root unions and every argument described", () => {
    for (const t of tools) {
      const input = t.inputSchema as Json;
      expect(input.type, t.name).toBe("object");
      for (const union of ["anyOf", "oneOf", "allOf"])
        expect(input[union], `${t.name} ${union}`).toBeUndefined();
      expect(input.additionalProperties, `${t.name} refuses unknown arguments`).toBe(false);
      expect(undescribed(input), t.name).toEqual([]);
      expect((t.outputSchema as Json | undefined)?.type, `${t.name} output`).toBe("object");
    }
  });

  // Hosts validate structuredContent against the advertised output schema; it states which fields
  // every result carries (`required`, src/mcp/json-schema.ts), so one without them is refused.
  it("answers real calls with results that validate against the advertised output schemas", async () => {
    const valid = (name: string, value: unknown) => {
      const schema = (tools.find((t) => t.name === name)?.outputSchema ?? {}) as Json;
      return ajv.getValidator(schema)(value).valid;
    };
    const models = structured<Json>(await h.call("list_models", {}));
    expect(valid("list_models", models)).toBe(true);
    const { accountingPeriod: _, ...noPeriod } = models;
    expect(valid("list_models", noPeriod)).toBe(false);

    const args = { model: "sandbox-image-fast", prompt: "a heron", wait: 0 };
    const made = structured<{ task: Json }>(await h.call("generate_image", args));
    expect(valid("generate_image", made)).toBe(true);
    expect(valid("generate_image", { ...made, created: "yes" })).toBe(false);
    const polled = structured<{ task: Json }>(await h.call("poll_task", { taskId: made.task.id }));
    expect(valid("poll_task", polled)).toBe(true);
    const { outputs: _o, ...noOutputs } = polled.task;
    expect(valid("poll_task", { ...polled, task: noOutputs })).toBe(false);
    const asked = structured<{ requests: Json[] }>(await h.call("list_requests", {}));
    expect(valid("list_requests", asked)).toBe(true);
    const [first] = asked.requests;
    expect(valid("list_requests", { requests: [{ ...first, tool: undefined }] })).toBe(false);
  });

  it("has titles and actionable descriptions of bounded length", () => {
    for (const t of tools) {
      expect(t.title, t.name).toBeTruthy();
      expect(t.description?.length ?? 0, t.name).toBeGreaterThanOrEqual(80);
      expect(t.description?.length ?? 0, t.name).toBeLessThanOrEqual(1200);
    }
    for (const name of SPENDING_TOOLS) {
      const d = tools.find((t) => t.name === name)?.description ?? "";
      expect(d, name).toMatch(/spends Gems/);
      expect(d, name).toMatch(/idempotencyKey/);
    }
  });

  // Descriptions say only what is each tool's own; the rules they share must reach the assistant
  // once, in the instructions.
  it("carries the shared rules once, in the server's instructions", () => {
    const text = h.mcp.getInstructions() ?? "";
    for (const name of SPENDING_TOOLS) expect(text, name).toContain(name);
    for (const rule of [/idempotencyKey/, /not charged twice/, /poll_task/, /new work and spends again/])
      expect(text).toMatch(rule);
    for (const t of tools) expect(t.description, t.name).not.toMatch(/never charg\w+ twice/);
  });
});
