import { isToolVisibilityAppOnly } from "@modelcontextprotocol/ext-apps/app-bridge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listing } from "../../src/tooling/tool.js";
import { CATALOG } from "../../src/tools/catalog.js";
import { loadTools, TOOL_LOADERS } from "../../src/tools/index.js";
import { type Harness, harness } from "./harness.js";

const CONTRACT_TOOLS = [
  "list_models",
  "generate_image",
  "generate_video",
  "generate_audio",
  "poll_task",
  "upload_asset",
  "list_voices",
  "upload_voice",
  "chat",
  "extract_video",
  "list_requests",
];
const READ_ONLY = new Set(["list_models", "poll_task", "list_voices", "list_requests"]);
const SPENDING = ["generate_image", "generate_video", "generate_audio", "chat", "extract_video"];

type Json = Record<string, unknown>;

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

describe("tools/list", () => {
  let h: Harness;
  let tools: Awaited<ReturnType<Harness["mcp"]["listTools"]>>["tools"];
  beforeAll(async () => {
    h = await harness();
    // What the model sees: hosts hide the media viewer's app-only tools (test/viewer covers them).
    tools = (await h.mcp.listTools()).tools.filter((t) => !isToolVisibilityAppOnly(t));
  });
  afterAll(() => h.close());

  it("matches the snapshot", async () => {
    await expect(JSON.stringify(tools, null, 2)).toMatchFileSnapshot("../__snapshots__/tools-list.json");
  });

  it("lists from a catalog equal to the definitions (else: npx tsx tools/gen-catalog.ts)", async () => {
    expect(CATALOG).toEqual((await loadTools()).map(listing));
    expect(CATALOG.map((t) => t.name)).toEqual(Object.keys(TOOL_LOADERS));
    expect(tools.map((t) => t.name)).toEqual(CATALOG.map((t) => t.name));
  });

  it("offers every tool of the contract", () => {
    const names = tools.map((t) => t.name);
    for (const name of CONTRACT_TOOLS) expect(names).toContain(name);
  });

  it("states all four annotations, as the contract says", () => {
    for (const t of tools) {
      const a = t.annotations ?? {};
      for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
        expect(typeof a[hint], `${t.name}.${hint}`).toBe("boolean");
      }
      expect(a.readOnlyHint, t.name).toBe(READ_ONLY.has(t.name));
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

  it("has titles and actionable descriptions of bounded length", () => {
    for (const t of tools) {
      expect(t.title, t.name).toBeTruthy();
      expect(t.description?.length ?? 0, t.name).toBeGreaterThanOrEqual(80);
      expect(t.description?.length ?? 0, t.name).toBeLessThanOrEqual(1200);
    }
    for (const name of SPENDING) {
      const d = tools.find((t) => t.name === name)?.description ?? "";
      expect(d, name).toMatch(/spends Gems/);
      expect(d, name).toMatch(/idempotencyKey/);
    }
  });
});
