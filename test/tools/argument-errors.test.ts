/**
 * Every argument error of a call in one answer, an unknown model first (issue 32): the schema's
 * errors and the catalog's are gathered (src/mcp/tool-call.ts, src/calls/catalog/catalog-check.ts)
 * rather than reported one per round, and nothing is sent or recorded.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, harness, textOf } from "./harness.js";

const VIDEO = "POST /api/generate/video";
let h: Harness | undefined;
fakeTimeEach();
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function refusal(name: string, args: Record<string, unknown>): Promise<string> {
  if (!h) throw new Error("no harness");
  const r = await h.call(name, args);
  expect(r.isError).toBe(true);
  return textOf(r);
}

describe("argument errors", () => {
  it("names an unknown model first, before a parameter its rules ask for", async () => {
    h = await harness();
    const text = await refusal("generate_video", { model: "nope", prompt: "waves" });
    expect(text).toMatch(/^INVALID_ARGUMENT: model: "?nope"? is not in the model catalog/);
    expect(text.indexOf("model:")).toBeLessThan(text.indexOf("parameters.mode"));
    expect(text).toContain("parameters.mode: is required for video");
    expect(h.sandbox.stats.requests(VIDEO)).toBe(0);
    expect(await h.ledger.list(h.engine.keyHash)).toEqual([]);
  });

  it("gives every schema error and the catalog's in one answer", async () => {
    h = await harness();
    const text = await refusal("generate_video", {
      model: "nope",
      prompt: " ",
      parameters: { duration: 99 },
      wait: 900,
    });
    const fields = ["model:", "prompt:", "wait:", "parameters.mode:"];
    for (const f of fields) expect(text, f).toContain(f);
    expect(text).toMatch(/^INVALID_ARGUMENT: model:/);
    expect(text).toMatch(/\(\d+ errors\)/);
  });

  it("names unknown arguments beside the other errors, after the model", async () => {
    h = await harness();
    const text = await refusal("generate_image", { model: "nope", prompt: "x", colour: "red", wait: -1 });
    expect(text).toMatch(/^INVALID_ARGUMENT: model: /);
    expect(text).toContain("colour: unknown argument; generate_image accepts only model, prompt");
    expect(text).toContain("wait: must be at least 0");
    expect(text).toMatch(/\(3 errors\)/);
  });

  it("gives every catalog error of a known model at once", async () => {
    h = await harness();
    const text = await refusal("generate_image", {
      model: "sandbox-image-fast",
      prompt: "a kite",
      parameters: { ratio: "7:1", outputCount: 4, resolution: "4K" },
    });
    expect(text).toContain("parameters.ratio:");
    expect(text).toContain("parameters.resolution:");
    expect(text).toMatch(/\(2 errors\)/);
  });

  it("keeps a single error as it was, and a model error of a tool whose schema passed", async () => {
    h = await harness();
    const one = await refusal("generate_image", { model: "nope", prompt: "a kite" });
    expect(one).toMatch(/^INVALID_ARGUMENT: model: "?nope"? is not in the model catalog/);
    expect(one).not.toMatch(/errors\)/);
    const chat = await refusal("chat", { model: "nope", messages: [], max_tokens: 0 });
    expect(chat).toMatch(/^INVALID_ARGUMENT: model: /);
    expect(chat).toContain("messages");
  });
});
