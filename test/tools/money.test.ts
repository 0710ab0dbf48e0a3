/**
 * Money at the edges: a retained ANALYSIS_FAILED replays instead of paying again; the spending
 * threshold binds when the host cannot ask; a save that cannot work is refused before the charge,
 * and one that fails after it says the work is done and charged.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { renderVideo } from "../../src/sandbox/media/mp4.js";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, type HarnessOptions, harness, structured, textOf } from "./harness.js";

const IMAGE = "POST /api/generate/image";
const VIDEO = "POST /api/generate/video";
const CHAT = "POST /api/generate/text/v1/chat/completions";
const EXTRACT = "POST /api/generate/extract/video";
const FILES = "GET /sandbox/files/{id}";
const video = {
  model: "sandbox-video-lite",
  prompt: "waves",
  parameters: { mode: "text-to-video", duration: 5, ratio: "16:9" },
  wait: 0,
};

let h: Harness;
const open = async (o?: HarnessOptions) => {
  h = await harness(o);
  return h;
};
fakeTimeEach();
afterEach(() => h?.close());

async function uploadVideo(): Promise<string> {
  const data = renderVideo("clip", 3, "16:9").toString("base64");
  const { asset } = structured<{ asset: { id: string } }>(
    await h.call("upload_asset", { data, mimeType: "video/mp4" }),
  );
  // Past the asset's processing, so the extraction does not meet REFERENCES_PROCESSING first.
  h.sandbox.advance(5_000);
  return asset.id;
}

describe("a retained ANALYSIS_FAILED", () => {
  it("replays the same identity on an identical call: one dispatch, and says how to get new work", async () => {
    await open();
    const videoAssetId = await uploadVideo();
    const args = { videoAssetId, prompt: "what happens [sandbox:analysis-failed]" };
    const a = await h.call("extract_video", args);
    const b = await h.call("extract_video", args);
    for (const r of [a, b]) {
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/^ANALYSIS_FAILED: /);
      expect(textOf(r)).toMatch(/retained: calling again with the same arguments replays it/);
      expect(textOf(r)).toMatch(/change the request \(prompt or model\) or pass a new idempotencyKey/);
    }
    const identity = /Identity \(idempotencyKey\): (\S+),/.exec(textOf(a))?.[1];
    expect(identity).toBeDefined();
    expect(textOf(b)).toContain(`Identity (idempotencyKey): ${identity},`);
    expect(h.sandbox.stats.dispatches(EXTRACT)).toBe(1);
    const records = await h.ledger.list(h.engine.keyHash);
    expect(records).toEqual([
      expect.objectContaining({ idempotencyKey: identity, state: "closed", tool: "extract_video" }),
    ]);
    // An explicit new idempotencyKey is new work, as the message says.
    const c = await h.call("extract_video", { ...args, idempotencyKey: "analysis-2" });
    expect(textOf(c)).toContain("Identity (idempotencyKey): analysis-2,");
    expect(h.sandbox.stats.dispatches(EXTRACT)).toBe(2);
  });
});

describe("the spending threshold when the host cannot ask", () => {
  it("is sent as maxGems where there is no estimate, a higher quote refused with the way up; a larger maxGems of the call's own is quoted", async () => {
    await open({ config: { confirmAboveGems: 1 } });
    const r = await h.call("generate_video", video);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^PRICE_CHANGED: /);
    expect(textOf(r)).toMatch(
      /ceiling of 1 Gem was GENERATION_CONFIRM_ABOVE_GEMS \(1\), sent as maxGems because this client cannot ask the user/,
    );
    expect(textOf(r)).toMatch(/nothing was charged/);
    expect(textOf(r)).toMatch(
      /Next: to spend more than GENERATION_CONFIRM_ABOVE_GEMS, call again without approval and with maxGems set to the most the user may spend/,
    );
    expect(h.sandbox.stats.dispatches(VIDEO)).toBe(0);
    // A maxGems of the call's own is no agreement of the user's: it is quoted, nothing sent.
    const own = await h.call("generate_video", { ...video, maxGems: 100_000 });
    expect(textOf(own)).toMatch(/^QUOTE: nothing was sent/);
    expect(h.sandbox.stats.requests(VIDEO)).toBe(1);
  });

  it("a client that cannot ask: a call under the threshold goes through with the threshold as its ceiling", async () => {
    await open({ config: { confirmAboveGems: 10 } });
    const r = await h.call("generate_image", {
      model: "sandbox-image-fast",
      prompt: "cheap",
      maxGems: 1_000,
      wait: 0,
    });
    expect(structured(r)).toMatchObject({ created: true });
    expect(textOf(r)).toMatch(
      /Sent with maxGems 10, your confirmation threshold \(GENERATION_CONFIRM_ABOVE_GEMS 10\), without asking: this client cannot ask the user \(no elicitation\); the call's maxGems 1000 was lowered to it/,
    );
  });

  it("a lower GENERATION_MAX_GEMS stays the ceiling, without the threshold note", async () => {
    await open({ config: { confirmAboveGems: 1_000, maxGems: 1 } });
    const r = await h.call("generate_video", video);
    expect(textOf(r)).toMatch(/^PRICE_CHANGED: /);
    expect(textOf(r)).not.toMatch(/GENERATION_CONFIRM_ABOVE_GEMS/);
  });

  it("binds chat too, within the text ceiling", async () => {
    await open({ config: { confirmAboveGems: 1 } });
    const r = await h.call("chat", {
      model: "sandbox-chat-small",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(textOf(r)).toMatch(/^PRICE_CHANGED: .*ceiling of 1 Gem was GENERATION_CONFIRM_ABOVE_GEMS/s);
    expect(h.sandbox.stats.dispatches(CHAT)).toBe(0);
  });
});

describe("saving and the charge", () => {
  // The harness sets GENERATION_OUTPUT_DIR explicitly.
  const outputDir = (): string => h.engine.config.outputDir ?? "";
  it("refuses save: true before submitting when the output directory is outside the allowed ones", async () => {
    await open({ config: { outputDir: "/" } });
    const r = await h.call("generate_image", { model: "sandbox-image-fast", prompt: "fox", save: true });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^SAVE_NOT_ALLOWED: .*output directory \/ is outside the allowed directories/);
    expect(textOf(r)).toMatch(/GENERATION_FILES/);
    // The model catalog may be read (a GET); nothing is submitted.
    expect(h.sandbox.stats.requests(IMAGE)).toBe(0);
  });

  it("with an empty roots list, saves into the configured directories", async () => {
    await open({ roots: () => [] });
    const r = await h.call("generate_image", {
      model: "sandbox-image-fast",
      prompt: "fox",
      save: true,
      wait: 20,
    });
    const s = structured<{ saved?: string[] }>(r);
    expect(s.saved?.length).toBe(1);
    expect(s.saved?.[0]?.startsWith(outputDir())).toBe(true);
  });

  it("with roots outside GENERATION_FILES, says which directories are in force and how to allow one", async () => {
    await open({ roots: (dir) => [path.join(dir, "elsewhere")] });
    // GENERATION_FILES is <temp>/files; the root, a sibling that exists, narrows it to nothing.
    const outside = path.join(path.dirname(h.engine.config.files[0] ?? "/"), "elsewhere");
    await mkdir(outside);
    const r = await h.call("generate_image", { model: "sandbox-image-fast", prompt: "fox", save: true });
    expect(textOf(r)).toMatch(/^SAVE_NOT_ALLOWED: .*no directory is allowed/);
    expect(textOf(r)).toContain(`narrowed by the client's MCP roots (${pathToFileURL(outside).href})`);
    expect(h.sandbox.stats.dispatches()).toBe(0);
    const s = await h.call("save_outputs", { taskId: "task_x" });
    // The fix that works first: roots only narrow, so the root's folder must join GENERATION_FILES.
    expect(textOf(s)).toMatch(
      /^SAVE_NOT_ALLOWED: .*Next: The client's MCP roots lie outside GENERATION_FILES: add the folder the host works in/,
    );
    expect(textOf(s)).not.toMatch(/no downloadable outputs/);
  });

  it("a save that fails after the charge says the work is done and charged, with the task ID, and points to save_outputs", async () => {
    await open();
    // A regular file where the output directory should be: allowed, but nothing can be written.
    await writeFile(outputDir(), "not a directory");
    const r = await h.call("generate_image", {
      model: "sandbox-image-fast",
      prompt: "fox",
      wait: 20,
      save: true,
    });
    const s = structured<{ task: { id: string; status: string }; saved?: string[] }>(r);
    expect(s.task.status).toBe("succeeded");
    const text = textOf(r);
    expect(text).toMatch(/Output #0 not saved: /);
    expect(text).toContain(`The task ${s.task.id} is done and its Gems are charged; do not submit again`);
    expect(text).toContain(`call save_outputs with {"taskId": "${s.task.id}"}`);
    expect(text).not.toMatch(/nothing was sent/);
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(1);
  });

  it("after a successful save the next step is not save_outputs", async () => {
    await open();
    const r = await h.call("generate_image", {
      model: "sandbox-image-fast",
      prompt: "fox",
      wait: 20,
      save: true,
    });
    const s = structured<{ saved: string[] }>(r);
    expect(s.saved[0]).toBe(
      path.join(outputDir(), `${(s as unknown as { task: { id: string } }).task.id}-0.png`),
    );
    expect(textOf(r)).toMatch(/Next: tell the user where the saved files are/);
    expect(textOf(r)).not.toMatch(/Next: .*save_outputs/);
  });
});

describe("chat and extraction say what was charged", () => {
  it("shows the Gems where the service gives them, or says it does not", async () => {
    await open();
    const r = await h.call("chat", {
      model: "sandbox-chat-small",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(textOf(r)).toMatch(/Gems: (\d+ \(|not shown by the service; it settles on measured usage)/);
    const videoAssetId = await uploadVideo();
    const x = await h.call("extract_video", { videoAssetId });
    expect(textOf(x)).toMatch(/Gems: (\d+ \(|not shown by the service; it settles on measured usage)/);
  });
});

describe("previews", () => {
  it("are best effort under a total cap: a hanging download host does not hold the finished task", async () => {
    await open();
    h.sandbox.faults.inject(FILES, { kind: "hang" });
    const started = Date.now();
    const r = await h.call("generate_image", { model: "sandbox-image-fast", prompt: "fox", wait: 20 });
    const s = structured<{ task: { status: string } }>(r);
    expect(s.task.status).toBe("succeeded");
    expect(textOf(r)).toMatch(/Preview of #0 left out: not fetched within 3 s/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe("messages", () => {
  it("voice_clone with a public voice says what is wrong: it needs a private voice from upload_voice", async () => {
    await open();
    const voices = structured<{ voices: { id: string }[] }>(
      await h.call("list_voices", { scope: "explore", page: 1 }),
    );
    const r = await h.call("generate_audio", {
      model: "service-voice",
      operation: "voice_clone",
      prompt: "Hello there",
      parameters: { voiceProfileId: voices.voices[0]?.id },
      wait: 0,
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^INVALID_REFERENCE: .*Next: voice_clone needs a private voice .*upload_voice/);
    expect(textOf(r)).not.toMatch(/Upload the media first/);
  });
});
