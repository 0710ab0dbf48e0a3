/**
 * What is refused before anything is spent: blank prompts and what the model catalog rules out.
 * Each refusal is INVALID_ARGUMENT naming the field, the value and what is allowed; nothing is
 * submitted and the ledger keeps no record. A catalog that cannot be read blocks nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, harness, structured, textOf } from "./harness.js";

const ROUTES = ["POST /api/generate/image", "POST /api/generate/video", "POST /api/generate/audio"];
const T2V = { mode: "text-to-video" };

let h: Harness;
fakeTimeEach();
afterEach(() => h?.close());

async function refusedLocally(tool: string, args: Record<string, unknown>, ...says: RegExp[]): Promise<void> {
  const r = await h.call(tool, tool === "extract_video" ? args : { wait: 0, ...args });
  expect(r.isError, textOf(r)).toBe(true);
  expect(textOf(r)).toMatch(/^INVALID_ARGUMENT: /);
  for (const s of says) expect(textOf(r)).toMatch(s);
  for (const route of ROUTES) expect(h.sandbox.stats.requests(route), route).toBe(0);
  const listed = structured<{ requests: unknown[] }>(await h.call("list_requests", {}));
  expect(listed.requests).toEqual([]);
}

describe("blank prompts", () => {
  it("an empty or blank prompt is refused for every paid tool with a prompt", async () => {
    h = await harness();
    for (const prompt of ["", "   ", "\n\t"]) {
      await refusedLocally(
        "generate_image",
        { model: "sandbox-image-fast", prompt },
        /^INVALID_ARGUMENT: prompt: /,
      );
      await refusedLocally(
        "generate_video",
        { model: "sandbox-video-lite", prompt, parameters: T2V },
        /prompt: must not be empty/,
      );
      await refusedLocally(
        "generate_audio",
        { model: "service-voice", operation: "speech", prompt, parameters: { voiceProfileId: "v" } },
        /prompt: /,
      );
      await refusedLocally(
        "generate_audio",
        { model: "sandbox-music", operation: "music", prompt },
        /prompt: /,
      );
      await refusedLocally("extract_video", { videoAssetId: "a1", prompt }, /prompt: .*general analysis/);
    }
    expect(h.sandbox.stats.requests("POST /api/generate/extract/video")).toBe(0);
  });
});

describe("what the catalog rules out", () => {
  it("a model of another kind, unknown or unavailable", async () => {
    h = await harness();
    await refusedLocally(
      "generate_image",
      { model: "sandbox-video-lite", prompt: "a fox" },
      /model: sandbox-video-lite is a video model, not an image one/,
      /sandbox-image-fast/,
    );
    await refusedLocally("generate_image", { model: "no-such-model", prompt: "a fox" }, /"no-such-model"/);
    await refusedLocally(
      "generate_image",
      { model: "sandbox-image-legacy", prompt: "a fox" },
      /model: sandbox-image-legacy is not available/,
    );
  });

  it("a ratio, resolution, duration or output count the model does not offer; a video without mode", async () => {
    h = await harness();
    await refusedLocally(
      "generate_image",
      { model: "sandbox-image-fast", prompt: "a fox", parameters: { ratio: "21:9" } },
      /parameters\.ratio: "21:9" is not offered by model sandbox-image-fast \(its ratios: 1:1, 16:9/,
    );
    await refusedLocally(
      "generate_image",
      { model: "sandbox-image-fast", prompt: "a fox", parameters: { resolution: "4K" } },
      /parameters\.resolution: "4K"/,
    );
    await refusedLocally(
      "generate_image",
      { model: "sandbox-image-edit", prompt: "a fox", parameters: { outputCount: 4, sourceImage: "a" } },
      /parameters\.outputCount: 4 .*maxOutputs: 2/,
    );
    await refusedLocally(
      "generate_video",
      { model: "sandbox-video-lite", prompt: "waves", parameters: { ...T2V, duration: 7 } },
      /parameters\.duration: 7 .*durations: 5, 10/,
    );
    await refusedLocally(
      "generate_video",
      { model: "sandbox-video-lite", prompt: "waves", parameters: { duration: 5 } },
      /parameters\.mode: is required/,
    );
  });

  it("music on the speech model, speech on the music model", async () => {
    h = await harness();
    await refusedLocally(
      "generate_audio",
      { model: "service-voice", operation: "music", prompt: "a calm song" },
      /operation: music is not offered by model service-voice/,
    );
    await refusedLocally(
      "generate_audio",
      { model: "sandbox-music", operation: "speech", prompt: "Hello", parameters: { voiceProfileId: "v" } },
      /operation: speech is not offered by model sandbox-music .*use service-voice/,
    );
  });

  it("a catalog that cannot be read blocks nothing: the service judges", async () => {
    h = await harness();
    h.sandbox.faults.inject("GET /api/generate/models", { status: 503, code: "TEMPORARILY_UNAVAILABLE" }, 20);
    const r = await h.call("generate_image", { model: "sandbox-video-lite", prompt: "a fox", wait: 0 });
    expect(textOf(r)).toMatch(/^MODEL_UNAVAILABLE: .*\(HTTP 422\)/);
    expect(h.sandbox.stats.requests("POST /api/generate/image")).toBe(1);
  });
});

describe("a call that may replay what the ledger holds", () => {
  it("an uncertain request is replayed for the service to judge, even where the catalog now refuses it", async () => {
    h = await harness();
    // Sent while the catalog could not be read, and its outcome lost: the record stays open.
    h.sandbox.faults.inject("GET /api/generate/models", { status: 503 }, 50);
    h.sandbox.faults.inject("POST /api/generate/image", { status: 503 }, 100);
    const args = { model: "sandbox-video-lite", prompt: "a fox", wait: 0 };
    const lost = await h.call("generate_image", args);
    expect(textOf(lost)).toMatch(/^(TIMEOUT|WORKFLOW_UNAVAILABLE|TEMPORARILY_UNAVAILABLE|HTTP_503)/);
    const open = structured<{ requests: { idempotencyKey: string; state: string }[] }>(
      await h.call("list_requests", {}),
    ).requests;
    expect(open).toHaveLength(1);
    expect(open[0]?.state).not.toBe("closed");
    h.sandbox.faults.clear();
    const before = h.sandbox.stats.requests("POST /api/generate/image");
    const again = await h.call("generate_image", args);
    expect(textOf(again)).toMatch(/^MODEL_UNAVAILABLE: /);
    expect(textOf(again)).toContain(open[0]?.idempotencyKey ?? "?");
    expect(h.sandbox.stats.requests("POST /api/generate/image")).toBe(before + 1);
  }, 30_000);

  it("a known idempotencyKey goes to the ledger, which refuses a changed body without sending", async () => {
    h = await harness();
    const first = await h.call("generate_image", {
      model: "sandbox-image-fast",
      prompt: "a fox",
      idempotencyKey: "mine-1",
      wait: 0,
    });
    expect(first.isError, textOf(first)).toBeFalsy();
    const r = await h.call("generate_image", {
      model: "sandbox-video-lite",
      prompt: "a fox",
      idempotencyKey: "mine-1",
      wait: 0,
    });
    expect(textOf(r)).toMatch(/^IDEMPOTENCY_CONFLICT: /);
    expect(h.sandbox.stats.requests("POST /api/generate/image")).toBe(1);
  });
});
