/**
 * What a model that reads only the text of a result can do with a generated output (built CLI
 * over stdio, sandbox on loopback): every output line of generate_*, poll_task and save_outputs
 * names the output's asset ID and what it can be passed as, and the ID taken from the text alone
 * is one the service accepts as `sourceImage` (and, for a video, as extract_video's
 * `videoAssetId`). The task resource lists the same IDs, and the storyboard and voice_over prompts
 * tell the model to take it from there.
 */
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectLoopbackSandbox, type InProcessSandboxedCli } from "../helpers/sandboxed-cli.js";

type Result = Awaited<ReturnType<Client["callTool"]>>;
const textOf = (r: Result): string =>
  (r.content as { type: string; text?: string }[]).find((c) => c.type === "text")?.text ?? "";

/** The asset IDs an answer's text names, in order: what a model reading it would take. */
const assetIdsIn = (text: string): string[] =>
  [...text.matchAll(/asset ID ([^\s,;()]+)/g)].map((m) => m[1] ?? "");
const taskIdIn = (text: string): string => /^Task (\S+) /m.exec(text)?.[1] ?? "";

let cli: InProcessSandboxedCli;
beforeAll(async () => {
  // Four times the sandbox's speed: an image is done in about a second, a video in a few.
  cli = await connectLoopbackSandbox({ timeScale: 4 });
});
afterAll(() => cli?.close());

const call = (name: string, args: Record<string, unknown>) => cli.client.callTool({ name, arguments: args });

describe("an output's asset ID is in the text, and the service takes it", () => {
  it("generate_image names it with its uses; the edit model accepts it as sourceImage", async () => {
    const made = await call("generate_image", {
      model: "sandbox-image-fast",
      prompt: "a red kite",
      wait: 30,
    });
    const text = textOf(made);
    expect(made.isError, text).toBeFalsy();
    const [id] = assetIdsIn(text);
    expect(id, text).toBeDefined();
    expect(id).not.toMatch(/^generation:|^https?:/);
    expect(text).toMatch(/asset ID \S+ \(use it as sourceImage or endFrame, or in referenceAssetIds\)/);

    // A follow-up built from the text alone: the edit model requires an owned source image.
    const edited = await call("generate_image", {
      model: "sandbox-image-edit",
      prompt: "the same kite at dusk",
      parameters: { sourceImage: id },
      wait: 30,
    });
    expect(edited.isError, textOf(edited)).toBeFalsy();
    expect(textOf(edited)).toMatch(/succeeded/);

    const again = await call("generate_image", {
      model: "sandbox-image-pro",
      prompt: "a kite in the same style",
      referenceAssetIds: assetIdsIn(textOf(edited)),
      wait: 30,
    });
    expect(again.isError, textOf(again)).toBeFalsy();
  }, 60_000);

  it("poll_task, save_outputs and the task resource name the same asset IDs", async () => {
    const made = await call("generate_image", {
      model: "sandbox-image-pro",
      prompt: "two lanterns",
      parameters: { outputCount: 2 },
      wait: 30,
    });
    const ids = assetIdsIn(textOf(made));
    expect(ids).toHaveLength(2);
    const taskId = taskIdIn(textOf(made));

    const polled = await call("poll_task", { taskId });
    expect(assetIdsIn(textOf(polled))).toEqual(ids);

    const saved = await call("save_outputs", { taskId });
    expect(saved.isError, textOf(saved)).toBeFalsy();
    expect(assetIdsIn(textOf(saved))).toEqual(ids);
    expect(textOf(saved)).toMatch(/asset ID \S+ \(use it as sourceImage/);

    const read = await cli.client.readResource({ uri: `generation://tasks/${encodeURIComponent(taskId)}` });
    const body = JSON.parse(String((read.contents[0] as { text?: string }).text)) as {
      outputs: { assetId: string; use: string }[];
    };
    expect(body.outputs.map((o) => o.assetId)).toEqual(ids);
    expect(body.outputs[0]?.use).toMatch(/sourceImage/);
  }, 60_000);

  it("a video's line offers it as extract_video's videoAssetId, and extraction takes it", async () => {
    const made = await call("generate_video", {
      model: "sandbox-video-lite",
      prompt: "waves on a beach",
      parameters: { mode: "text-to-video" },
      wait: 30,
    });
    const text = textOf(made);
    expect(made.isError, text).toBeFalsy();
    expect(text).toMatch(/asset ID \S+ \(use it as videoAssetId for extract_video/);
    const [id] = assetIdsIn(text);
    const extracted = await call("extract_video", { videoAssetId: id, prompt: "what moves?" });
    expect(extracted.isError, textOf(extracted)).toBeFalsy();
  }, 60_000);
});

describe("the prompts say where the asset ID is", () => {
  it.each([
    ["storyboard", { scene: "a kite over the sea" }],
    ["voice_over", { script: "Hello there.", voiceId: "v1" }],
  ])("%s refers to the asset ID on each output line", async (name, args) => {
    const prompt = await cli.client.getPrompt({ name, arguments: args });
    const text = (prompt.messages[0]?.content as { text?: string } | undefined)?.text ?? "";
    expect(text).toMatch(/output line names its asset ID/);
  });
});
