/**
 * The service client against the sandbox, over real HTTP on loopback and in-process through
 * the fetch-style handler: the two halves agree on every endpoint and on the error family.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildChatBody, buildExtractBody, buildMediaBody } from "../../src/client/requests.js";
import { ServiceClient } from "../../src/client/service-client.js";
import { renderVideo } from "../../src/sandbox/media/mp4.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import {
  createSandbox,
  SANDBOX_API_KEY,
  SANDBOX_EXTRACTION_MODEL,
  type Sandbox,
} from "../../src/sandbox/sandbox.js";
import { decodePng, freshIdem } from "./sandbox-helpers.js";

for (const mode of ["http", "fetch"] as const) {
  describe(`service client against the sandbox (${mode})`, () => {
    let sb: Sandbox;
    let client: ServiceClient;
    let close: () => Promise<void> = async () => {};
    beforeAll(async () => {
      sb = createSandbox({ now: () => 1_800_000_000_000, seed: `client-${mode}` });
      if (mode === "http") {
        const server = await sb.listen({ port: 0 });
        close = server.close;
        client = new ServiceClient({ baseUrl: server.url, apiKey: SANDBOX_API_KEY });
      } else {
        client = new ServiceClient({
          baseUrl: "http://sandbox.invalid",
          apiKey: SANDBOX_API_KEY,
          fetch: sb.handler as typeof fetch,
        });
      }
    });
    afterAll(async () => {
      await close();
      await sb.close();
    });

    it("lists models, submits, replays, polls and downloads a PNG", async () => {
      const models = await client.listModels();
      expect(models.models.length).toBeGreaterThan(5);
      const { bytes } = buildMediaBody("image", {
        model: "sandbox-image-fast",
        prompt: "client",
        parameters: { ratio: "9:16" },
      });
      const idem = freshIdem();
      const first = await client.submitMedia("image", bytes, idem);
      const again = await client.submitMedia("image", bytes, idem);
      expect([
        first.httpStatus,
        first.submission.created,
        again.httpStatus,
        again.submission.created,
      ]).toEqual([202, true, 200, false]);
      expect(await client.headTask(first.submission.task.id)).toBe(true);
      expect(await client.headTask("task_missing")).toBe(false);
      sb.advance(3_000);
      const task = await client.getTask(first.submission.task.id);
      expect(task.status).toBe("succeeded");
      const out = await client.fetchOutput(task.outputs[0]?.asset?.url ?? "");
      expect(out.mimeType).toBe("image/png");
      expect(decodePng(out.bytes).width).toBe(180);
      expect(sb.stats.dispatches("POST /api/generate/image")).toBe(1);
    });

    it("maps refusals to the error family with the service's code", async () => {
      const { bytes } = buildMediaBody("image", { model: "sandbox-image-pro", prompt: "p", maxGems: 1 });
      await expect(client.submitMedia("image", bytes, freshIdem())).rejects.toMatchObject({
        status: 409,
        code: "PRICE_CHANGED",
        outcome: "definitive",
      });
      await expect(client.getTask("task_nope")).rejects.toMatchObject({ status: 404, code: "NOT_FOUND" });
    });

    it("uploads an asset and a voice, lists voices, speaks, chats (streamed) and extracts", async () => {
      const asset = await client.uploadAsset({ data: renderVideo("up", 3, "16:9") }, { filename: "up.mp4" });
      expect([asset.kind, asset.state]).toEqual(["video", "processing"]);
      const dir = await mkdtemp(join(tmpdir(), "sbx-voice-"));
      const path = join(dir, "me.wav");
      await writeFile(path, renderAudio("me", 2));
      const voice = await client.uploadVoice({ path, duration: 20, rightsConfirmed: true });
      const mine = await client.listVoices({ scope: "mine" });
      expect(mine.voices.map((v) => v.id)).toContain(voice.id);
      const explore = await client.listVoices({ scope: "explore", page: 2, language: "de" });
      expect(explore.voices).toEqual([]);
      const speech = buildMediaBody("audio", {
        model: "service-voice",
        operation: "voice_clone",
        prompt: "Hello",
        parameters: { voiceProfileId: voice.id },
      });
      expect((await client.submitMedia("audio", speech.bytes, freshIdem())).httpStatus).toBe(202);

      const deltas: string[] = [];
      const chat = buildChatBody({
        model: "sandbox-chat-small",
        messages: [{ role: "user", content: "stream me a few words please" }],
        stream: true,
      });
      const answer = await client.chat(chat.bytes, freshIdem(), { onDelta: (d) => deltas.push(d) });
      expect(answer.content).toMatch(/^Sandbox answer to: stream me a few words please/);
      expect(deltas.join("")).toBe(answer.content);
      expect(answer.usage?.total_tokens).toBeGreaterThan(0);

      sb.advance(1_000);
      const ext = buildExtractBody({ model: SANDBOX_EXTRACTION_MODEL, videoAssetId: asset.id });
      const res = await client.extractVideo(ext.bytes, freshIdem());
      expect(res.extraction.durationSeconds).toBeCloseTo(3, 2);
    });

    it("a cut stream is an incomplete, uncertain answer; its replay completes without a new dispatch", async () => {
      const route = "POST /api/generate/text/v1/chat/completions";
      const chat = buildChatBody({
        model: "sandbox-chat-small",
        messages: [{ role: "user", content: "a reply long enough to be cut in the middle" }],
        stream: true,
      });
      const idem = freshIdem();
      sb.faults.inject(route, { kind: "cut-stream" });
      const before = sb.stats.dispatches(route);
      await expect(client.chat(chat.bytes, idem)).rejects.toMatchObject({ outcome: "uncertain" });
      const replay = await client.chat(chat.bytes, idem);
      expect(replay.content).toMatch(/^Sandbox answer to:/);
      expect(sb.stats.dispatches(route)).toBe(before + 1);
    });
  });
}
