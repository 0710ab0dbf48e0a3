/**
 * Every tool's whole answer, snapshotted: its main success and its main refusal, text, resource
 * links and structuredContent together (formatted by answer-format.ts, kept in
 * test/tools/answers/), so a change of wording, of a field or of the next step shows in review
 * instead of going unseen. Regenerate after an intended change: `npx vitest run
 * test/tools/answer-snapshots.test.ts -u`, then read the diff.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { renderVideo } from "../../src/sandbox/media/mp4.js";
import { renderImage } from "../../src/sandbox/media/png.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import { CATALOG } from "../../src/tools/catalog.js";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { formatAnswer } from "./answer-format.js";
import { type Harness, harness, structured, textOf } from "./harness.js";

let h: Harness;
fakeTimeEach();
afterEach(() => h?.close());

const snap = (r: CallToolResult, file: string) =>
  expect(formatAnswer(r)).toMatchFileSnapshot(`answers/${file}.md`);

const image = { model: "sandbox-image-fast", prompt: "a red kite over a green hill", wait: 20 };

async function imageTask(): Promise<string> {
  return structured<{ task: { id: string } }>(await h.call("generate_image", image)).task.id;
}

async function videoAsset(): Promise<string> {
  const data = renderVideo("clip", 3, "16:9").toString("base64");
  const { asset } = structured<{ asset: { id: string } }>(
    await h.call("upload_asset", { data, mimeType: "video/mp4" }),
  );
  h.sandbox.advance(5_000);
  return asset.id;
}

/** Each tool: [its main success, its main refusal], each a function of the open harness. */
const CASES: Record<string, [() => Promise<CallToolResult>, () => Promise<CallToolResult>]> = {
  list_models: [
    () => h.call("list_models", { kind: "image" }),
    () => h.call("list_models", { kind: "hologram" }),
  ],
  generate_image: [
    () => h.call("generate_image", image),
    () => h.call("generate_image", { ...image, model: "no-such-model" }),
  ],
  generate_video: [
    () =>
      h.call("generate_video", {
        model: "sandbox-video-lite",
        prompt: "waves on a shore",
        parameters: { mode: "text-to-video", duration: 5, ratio: "16:9" },
        wait: 0,
      }),
    () =>
      h.call("generate_video", {
        model: "sandbox-video-lite",
        prompt: "waves",
        parameters: { duration: 99 },
      }),
  ],
  generate_audio: [
    async () => {
      const voices = structured<{ voices: { id: string }[] }>(
        await h.call("list_voices", { scope: "explore" }),
      );
      const voiceProfileId = voices.voices[0]?.id;
      return h.call("generate_audio", {
        model: "service-voice",
        operation: "speech",
        prompt: "Hello there",
        parameters: { voiceProfileId },
        wait: 20,
      });
    },
    () =>
      h.call("generate_audio", {
        model: "service-voice",
        operation: "speech",
        prompt: "hi",
        parameters: { voiceProfileId: "v1", speed: 3 },
      }),
  ],
  generate_batch: [
    () =>
      h.call("generate_batch", {
        items: [
          { tool: "generate_image", arguments: { model: "sandbox-image-fast", prompt: "a red kite" } },
          { tool: "generate_image", arguments: { model: "sandbox-image-fast", prompt: "a blue kite" } },
        ],
        wait: 20,
      }),
    () =>
      h.call("generate_batch", {
        items: [{ tool: "generate_video", arguments: { model: "nope", prompt: "waves" } }],
      }),
  ],
  poll_task: [
    async () => h.call("poll_task", { taskId: await imageTask() }),
    () => h.call("poll_task", { taskId: "task_doesnotexist0000" }),
  ],
  save_outputs: [
    async () => h.call("save_outputs", { taskId: await imageTask() }),
    () => h.call("save_outputs", { taskId: "task_doesnotexist0000" }),
  ],
  upload_asset: [
    () =>
      h.call("upload_asset", {
        data: renderImage("cat", "16:9").toString("base64"),
        mimeType: "image/png",
        filename: "cat.png",
      }),
    () =>
      h.call("upload_asset", {
        data: Buffer.from("<html>not media</html>").toString("base64"),
        mimeType: "image/png",
      }),
  ],
  list_voices: [() => h.call("list_voices", { scope: "explore" }), () => h.call("list_voices", { page: 0 })],
  upload_voice: [
    async () => {
      await writeFile(path.join(h.dir, "files", "me.wav"), renderAudio("me", 20));
      return h.call("upload_voice", { path: "me.wav", rightsConfirmed: true });
    },
    async () => {
      await writeFile(path.join(h.dir, "files", "me.wav"), renderAudio("me", 20));
      return h.call("upload_voice", { path: "me.wav" });
    },
  ],
  chat: [
    () =>
      h.call("chat", { model: "sandbox-chat-small", messages: [{ role: "user", content: "Say hello." }] }),
    () => h.call("chat", { model: "no-such-model", messages: [{ role: "user", content: "hi" }] }),
  ],
  extract_video: [
    async () => h.call("extract_video", { videoAssetId: await videoAsset(), prompt: "What happens?" }),
    () => h.call("extract_video", { videoAssetId: "ast_doesnotexist0000", prompt: "What happens?" }),
  ],
  list_requests: [
    async () => {
      await imageTask();
      return h.call("list_requests", {});
    },
    () => h.call("list_requests", { cursor: "not-a-cursor" }),
  ],
};

describe("every tool's whole answer", () => {
  for (const [tool, [success, refusal]] of Object.entries(CASES)) {
    it(`${tool}: its main success`, async () => {
      h = await harness();
      const r = await success();
      expect(r.isError ?? false).toBe(false);
      // Self-contained for a host that shows its model only structuredContent (Claude Code): the
      // step to take is there, and the same step ends the text.
      const next = (r.structuredContent as { next?: unknown } | undefined)?.next;
      expect(typeof next === "string" && next.length > 10, `${tool}: structuredContent.next`).toBe(true);
      expect(textOf(r)).toContain(`Next: ${next}`);
      await snap(r, `${tool}.success`);
    });
    it(`${tool}: its main refusal`, async () => {
      h = await harness();
      const r = await refusal();
      expect(r.isError).toBe(true);
      await snap(r, `${tool}.refusal`);
    });
  }

  it("advertises next as a required string in every tool's output schema", () => {
    for (const tool of CATALOG) {
      const out = tool.outputSchema as { required?: string[]; properties?: Record<string, unknown> };
      expect(out.required, tool.name).toContain("next");
      expect(out.properties?.next, tool.name).toEqual({ type: "string" });
    }
  });

  it("covers every tool the server lists", async () => {
    h = await harness();
    const { tools } = await h.mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(CASES).sort());
  });
});
