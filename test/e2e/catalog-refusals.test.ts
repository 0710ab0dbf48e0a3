/**
 * What the cached model catalog, or an earlier answer, already settles is refused locally (the built
 * CLI over stdio, against a sandbox on loopback): INVALID_ARGUMENT naming the field, the value and
 * what is allowed; no question, no claim, no submission, and list_requests shows no record.
 * - chat with a model that is not a text model; extract_video with a catalog model (not the
 *   analysis model); an edit model without its source image; more references than the model
 *   takes; a parameter the model's `parameters` list leaves out; endFrame where the model has none;
 * - an asset of the wrong kind, known from upload_asset's answer or a task's outputs.
 * The words are "an image model", never "a image model".
 */
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderVideo } from "../../src/sandbox/media/mp4.js";
import { renderImage } from "../../src/sandbox/media/png.js";
import type { Sandbox } from "../../src/sandbox/sandbox.js";
import { CLI, type ConnectedCli, connectCli } from "../helpers/cli.js";
import { type LoopbackSandbox, loopbackSandbox } from "../helpers/loopback-sandbox.js";

type Result = Awaited<ReturnType<Client["callTool"]>>;
const textOf = (r: Result): string =>
  (r.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");

let loopback: LoopbackSandbox;
let sandbox: Sandbox;
let c: ConnectedCli;
let imageAsset: string;
let videoAsset: string;
let generatedImage: string;

beforeAll(async () => {
  loopback = await loopbackSandbox({ timeScale: 20 });
  sandbox = loopback.sandbox;
  c = await connectCli({ args: [CLI], env: loopback.envOf("refusals") });
  const upload = async (data: Buffer, mimeType: string) =>
    (
      (
        await c.client.callTool({
          name: "upload_asset",
          arguments: { data: data.toString("base64"), mimeType },
        })
      ).structuredContent as { asset: { id: string } }
    ).asset.id;
  imageAsset = await upload(renderImage("ref", "1:1"), "image/png");
  videoAsset = await upload(renderVideo("clip", 3, "16:9"), "video/mp4");
  const made = await c.client.callTool({
    name: "generate_image",
    arguments: { model: "sandbox-image-fast", prompt: "a kite", wait: 15 },
  });
  const task = (made.structuredContent as { task: { outputs: { asset: { id: string } | null }[] } }).task;
  generatedImage = task.outputs[0]?.asset?.id ?? "";
  expect(generatedImage).not.toBe("");
}, 60_000);

afterAll(async () => {
  await c?.client.close();
  await loopback.stop();
});

async function ledgerSize(): Promise<number> {
  const r = await c.client.callTool({ name: "list_requests", arguments: { limit: 100 } });
  return (r.structuredContent as { requests: unknown[] }).requests.length;
}

/** Refused locally, saying each of `says`; nothing reached the service's paid routes and no record. */
async function refused(tool: string, args: Record<string, unknown>, ...says: (RegExp | string)[]) {
  const records = await ledgerSize();
  const sent = sandbox.stats.requests();
  const before = ["image", "video", "audio", "extract/video", "text/v1/chat/completions"].map((p) =>
    sandbox.stats.requests(`POST /api/generate/${p}`),
  );
  const r = await c.client.callTool({ name: tool, arguments: args });
  const text = textOf(r);
  expect(r.isError, text).toBe(true);
  expect(text).toMatch(/^INVALID_ARGUMENT: /);
  for (const s of says) {
    if (typeof s === "string") expect(text).toContain(s);
    else expect(text).toMatch(s);
  }
  expect(text).not.toMatch(/\ba image\b|\ba audio\b/);
  const after = ["image", "video", "audio", "extract/video", "text/v1/chat/completions"].map((p) =>
    sandbox.stats.requests(`POST /api/generate/${p}`),
  );
  expect(after, `${tool} reached the service`).toEqual(before);
  // At most the catalog was read (a GET), nothing else.
  expect(sandbox.stats.requests() - sent).toBeLessThanOrEqual(1);
  expect(await ledgerSize()).toBe(records);
  return text;
}

const chat = (model: string) => ({ model, messages: [{ role: "user", content: "hi" }] });

describe("what the catalog settles is refused locally (built CLI)", () => {
  it("chat with a model that is not a text model", async () => {
    await refused(
      "chat",
      chat("sandbox-image-pro"),
      "model: sandbox-image-pro is an image model, not a text one",
      /text models in the catalog: sandbox-chat-small, sandbox-chat-large/,
    );
    await refused("chat", chat("no-such-model"), /model: "no-such-model" is not in the model catalog/);
  });

  it("extract_video with a generation model of the catalog", async () => {
    await refused(
      "extract_video",
      { videoAssetId: videoAsset, model: "sandbox-image-pro" },
      "model: sandbox-image-pro is an image model",
      /extract_video takes service-video-extract/,
    );
    await refused(
      "extract_video",
      { videoAssetId: videoAsset, model: "sandbox-video-lite" },
      "model: sandbox-video-lite is a video generation model",
    );
  });

  it("an edit model without its source image", async () => {
    await refused(
      "generate_image",
      { model: "sandbox-image-edit", prompt: "make it blue", wait: 0 },
      /parameters\.sourceImage: required by model sandbox-image-edit \(requiresSourceImage: true/,
    );
  });

  it("more references than the model takes", async () => {
    await refused(
      "generate_image",
      { model: "sandbox-image-fast", prompt: "a fox", referenceAssetIds: [imageAsset], wait: 0 },
      /referenceAssetIds: 1 given; model sandbox-image-fast takes at most 0 \(its maxReferenceImages: 0\)/,
    );
    await refused(
      "generate_video",
      {
        model: "sandbox-video-pro",
        prompt: "a wave",
        parameters: { mode: "text-to-video", resolution: "1080p" },
        referenceAssetIds: [imageAsset, generatedImage],
        wait: 0,
      },
      /referenceAssetIds: 2 given; model sandbox-video-pro takes at most 1 at resolution 1080p \(its maxReferenceImagesByResolution/,
    );
    await refused(
      "generate_video",
      {
        model: "sandbox-video-pro",
        prompt: "a wave",
        parameters: { mode: "text-to-video", referenceVideos: [videoAsset, videoAsset] },
        wait: 0,
      },
      /parameters\.referenceVideos: 2 given; model sandbox-video-pro takes at most 1 \(its maxReferenceVideos: 1\)/,
    );
  });

  it("a parameter the model's parameters list leaves out, or an end frame it has none for", async () => {
    await refused(
      "generate_image",
      { model: "sandbox-image-fast", prompt: "a fox", parameters: { style: "noir" }, wait: 0 },
      /parameters\.style: not a parameter of model sandbox-image-fast \(its parameters: ratio, resolution, outputCount, negativePrompt, magicPrompt, variant\)/,
    );
    await refused(
      "generate_video",
      {
        model: "sandbox-video-lite",
        prompt: "a wave",
        parameters: { mode: "image-to-video", sourceImage: imageAsset, endFrame: generatedImage },
        wait: 0,
      },
      /parameters\.endFrame: not a parameter of model sandbox-video-lite \(its parameters: mode, sourceImage, duration, ratio, resolution, audio\)/,
    );
  });

  it("an asset of the wrong kind, known from upload_asset or from a task's outputs", async () => {
    await refused(
      "extract_video",
      { videoAssetId: imageAsset },
      `videoAssetId: ${imageAsset} is an image asset (as upload_asset reported it), not a video`,
    );
    await refused(
      "extract_video",
      { videoAssetId: generatedImage },
      `videoAssetId: ${generatedImage} is an image asset (an output of task`,
    );
    await refused(
      "generate_image",
      { model: "sandbox-image-pro", prompt: "a fox", referenceAssetIds: [videoAsset], wait: 0 },
      `referenceAssetIds[0]: ${videoAsset} is a video asset (as upload_asset reported it), not an image`,
    );
    await refused(
      "generate_video",
      {
        model: "sandbox-video-lite",
        prompt: "a wave",
        parameters: { mode: "image-to-video", sourceImage: videoAsset },
        wait: 0,
      },
      `parameters.sourceImage: ${videoAsset} is a video asset`,
    );
  });
});
