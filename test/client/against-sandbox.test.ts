/**
 * The client over real HTTP on loopback against the sandbox service: every endpoint, the
 * replay and conflict rules, task completion and signed outputs, uploads from disk, chat
 * JSON and stream (including injected cut and error-frame streams), and auth failures.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForTask } from "../../src/client/poll.js";
import {
  buildChatBody,
  buildExtractBody,
  buildMediaBody,
  type MediaBodyInput,
} from "../../src/client/requests.js";
import { ServiceClient } from "../../src/client/service-client.js";
import {
  AuthenticationError,
  ConflictError,
  IncompleteStreamError,
  NotFoundError,
  PermissionDeniedError,
} from "../../src/client/service-errors.js";
import {
  createSandbox,
  SANDBOX_API_KEY,
  SANDBOX_EXTRACTION_MODEL,
  type Sandbox,
} from "../../src/sandbox/sandbox.js";
import { MAGIC, tempDir } from "./client-helpers.js";

let sandbox: Sandbox;
let server: { url: string; close(): Promise<void> };
let client: ServiceClient;
const tmp = tempDir();
let n = 0;
const identity = () => `sbx-${process.pid}-${++n}`;

beforeAll(async () => {
  sandbox = createSandbox({ seed: "client-tests" });
  server = await sandbox.listen({ port: 0, host: "127.0.0.1" });
  client = new ServiceClient({ baseUrl: server.url, apiKey: SANDBOX_API_KEY, random: () => 0 });
});
afterAll(async () => {
  await server.close();
  await sandbox.close();
  tmp.cleanup();
});

/** Submits, moves the sandbox clock past completion, and returns the finished task. */
async function finished(kind: "image" | "video" | "audio", input: MediaBodyInput) {
  const { bytes } = buildMediaBody(kind, input);
  const { submission } = await client.submitMedia(kind, bytes, identity());
  sandbox.advance(30 * 60_000);
  return waitForTask((signal) => client.getTask(submission.task.id, { signal }), { waitSeconds: 0 });
}

describe("discovery and auth", () => {
  it("lists models for the accounting period", async () => {
    const list = await client.listModels();
    expect(list.accountingPeriod).toBe("UTC calendar month");
    expect(list.models.map((m) => m.kind)).toEqual(
      expect.arrayContaining(["image", "video", "audio", "text"]),
    );
  });

  it("a wrong key is INVALID_API_KEY; a generate-only key cannot read", async () => {
    const stranger = new ServiceClient({ baseUrl: server.url, apiKey: `lgk_${"0".repeat(64)}` });
    await expect(stranger.listModels()).rejects.toBeInstanceOf(AuthenticationError);
    const writer = new ServiceClient({
      baseUrl: server.url,
      apiKey: sandbox.addKey({ scopes: ["generate"] }),
    });
    await expect(writer.listModels()).rejects.toMatchObject({ code: "INSUFFICIENT_SCOPE" });
    await expect(writer.listModels()).rejects.toBeInstanceOf(PermissionDeniedError);
  });

  it("lists public voices by page and language", async () => {
    const list = await client.listVoices({ scope: "explore", page: 1, language: "en" });
    expect(list.voices.length).toBeGreaterThan(0);
    expect(list.voices.every((v) => typeof v.id === "string" && typeof v.name === "string")).toBe(true);
  });
});

describe("media tasks", () => {
  it("a submission is created once; the exact replay answers 200; changed bytes conflict", async () => {
    const key = identity();
    const { bytes } = buildMediaBody("image", { model: "sandbox-image-fast", prompt: "a red fox" });
    const first = await client.submitMedia("image", bytes, key);
    expect(first.httpStatus).toBe(202);
    expect(first.submission.created).toBe(true);
    const again = await client.submitMedia("image", bytes, key);
    expect(again).toMatchObject({
      httpStatus: 200,
      submission: { created: false, task: { id: first.submission.task.id } },
    });
    const changed = buildMediaBody("image", { model: "sandbox-image-fast", prompt: "a blue fox" }).bytes;
    await expect(client.submitMedia("image", changed, key)).rejects.toMatchObject({
      code: "IDEMPOTENCY_CONFLICT",
    });
    await expect(client.submitMedia("image", changed, key)).rejects.toBeInstanceOf(ConflictError);
    expect(await client.headTask(first.submission.task.id)).toBe(true);
  });

  it("unknown tasks: HEAD is false, GET is NOT_FOUND", async () => {
    expect(await client.headTask("task_does_not_exist")).toBe(false);
    await expect(client.getTask("task_does_not_exist")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("a finished image has a signed output the client downloads without the key", async () => {
    const { task, terminal } = await finished("image", {
      model: "sandbox-image-fast",
      prompt: "a lighthouse",
    });
    expect(terminal).toBe(true);
    expect(task.status).toBe("succeeded");
    const url = task.outputs[0]?.asset?.url ?? "";
    const out = await client.fetchOutput(url);
    expect(out.mimeType).toBe("image/png");
    expect(Buffer.from(out.bytes.subarray(0, 8)).equals(MAGIC.png.subarray(0, 8))).toBe(true);
  });

  it("a read that meets a 503 is retried and succeeds", async () => {
    const { bytes } = buildMediaBody("image", { model: "sandbox-image-fast", prompt: "retry me" });
    const { submission } = await client.submitMedia("image", bytes, identity());
    const route = "GET /api/generate/tasks/{id}";
    const before = sandbox.stats.requests(route);
    sandbox.faults.inject(route, { status: 503, code: "TEMPORARILY_UNAVAILABLE" }, 2);
    expect((await client.getTask(submission.task.id)).id).toBe(submission.task.id);
    expect(sandbox.stats.requests(route) - before).toBe(3);
  });

  it("speech with a public voice is accepted", async () => {
    const { voices } = await client.listVoices({ scope: "explore" });
    const { bytes } = buildMediaBody("audio", {
      model: "service-voice",
      prompt: "Hello from the client tests.",
      operation: "speech",
      parameters: { voiceProfileId: voices[0]?.id, speed: 1.2 },
    });
    const r = await client.submitMedia("audio", bytes, identity());
    expect(r.httpStatus).toBe(202);
  });
});

describe("uploads and analysis", () => {
  it("uploads an image from disk and a video for extraction", async () => {
    const image = await finished("image", { model: "sandbox-image-fast", prompt: "a tree" });
    const png = await client.fetchOutput(image.task.outputs[0]?.asset?.url ?? "");
    const pngPath = join(tmp.dir, "tree.png");
    writeFileSync(pngPath, png.bytes);
    const asset = await client.uploadAsset({ path: pngPath }, { filename: "tree.png" });
    expect(asset.kind).toBe("image");

    const video = await finished("video", {
      model: "sandbox-video-lite",
      prompt: "waves",
      parameters: { mode: "text-to-video", duration: 5 },
    });
    const clip = await client.fetchOutput(video.task.outputs[0]?.asset?.url ?? "");
    const clipPath = join(tmp.dir, "waves.bin");
    writeFileSync(clipPath, clip.bytes);
    const uploaded = await client.uploadAsset({ path: clipPath });
    expect(uploaded.kind).toBe("video");
    sandbox.advance(60_000);
    const { bytes } = buildExtractBody({
      model: SANDBOX_EXTRACTION_MODEL,
      videoAssetId: uploaded.id,
      prompt: "what?",
    });
    const key = identity();
    const result = await client.extractVideo(bytes, key);
    expect(result.extraction.frames.length).toBeGreaterThan(0);
    expect(await client.extractVideo(bytes, key)).toEqual(result);
  });

  it("uploads a voice recording as multipart and finds it in `mine`", async () => {
    const path = join(tmp.dir, "me.wav");
    writeFileSync(path, Buffer.concat([MAGIC.wav, Buffer.alloc(48_000)]));
    const voice = await client.uploadVoice({ path, duration: 20, rightsConfirmed: true });
    const mine = await client.listVoices({ scope: "mine" });
    expect(mine.voices.map((v) => v.id)).toContain(voice.id);
  });
});

describe("chat", () => {
  const messages = [{ role: "user" as const, content: "Say something short." }];

  it("answers JSON, and a stream that ends with [DONE]", async () => {
    const json = await client.chat(
      buildChatBody({ model: "sandbox-chat-small", messages }).bytes,
      identity(),
    );
    expect(json.streamed).toBe(false);
    expect(json.content.length).toBeGreaterThan(0);
    const deltas: string[] = [];
    const streamed = await client.chat(
      buildChatBody({ model: "sandbox-chat-small", messages, stream: true }).bytes,
      identity(),
      { onDelta: (d) => deltas.push(d) },
    );
    expect(streamed.streamed).toBe(true);
    expect(deltas.join("")).toBe(streamed.content);
    expect(streamed.usage).not.toBeNull();
  });

  for (const fault of [{ kind: "cut-stream" }, { kind: "error-frame" }] as const) {
    it(`a ${fault.kind} stream is incomplete; replaying the identity completes it`, async () => {
      const { bytes } = buildChatBody({ model: "sandbox-chat-small", messages, stream: true });
      const key = identity();
      sandbox.faults.inject("POST /api/generate/text/v1/chat/completions", fault);
      const err = await client.chat(bytes, key).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(IncompleteStreamError);
      expect((err as IncompleteStreamError).outcome).toBe("uncertain");
      const replay = await client.chat(bytes, key);
      expect(replay.content.length).toBeGreaterThan(0);
    });
  }
});
