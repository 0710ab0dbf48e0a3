import { fileTypeFromBuffer } from "file-type";
import { parseBuffer } from "music-metadata";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubmissionSchema, type Task, TaskEnvelopeSchema } from "../../src/client/schemas.js";
import { SANDBOX_MARKERS } from "../../src/sandbox/sandbox.js";
import { decodePng, freshIdem, type Harness, startSandbox } from "./sandbox-helpers.js";

let h: Harness;
beforeAll(async () => {
  h = await startSandbox();
});
afterAll(() => h.close());

type ErrorBody = { error: { code?: string; message: string } };

const image = (prompt: string, parameters: Record<string, unknown> = {}) => ({
  model: "sandbox-image-fast",
  prompt,
  parameters,
});

async function submit(kind: string, body: unknown, idem = freshIdem(), key?: string) {
  const r = await h.post(`/api/generate/${kind}`, body, key ? { idem, key } : { idem });
  const json = (await r.json()) as ErrorBody;
  return { status: r.status, json, sub: r.status < 300 ? SubmissionSchema.parse(json) : undefined };
}

async function read(id: string, key?: string): Promise<{ status: number; task?: Task }> {
  const r = await h.call(`/api/generate/tasks/${id}`, key ? { key } : {});
  if (r.status !== 200) return { status: r.status };
  return { status: 200, task: TaskEnvelopeSchema.parse(await r.json()).task };
}

async function download(url: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const r = await fetch(url);
  return { status: r.status, type: r.headers.get("content-type"), bytes: Buffer.from(await r.arrayBuffer()) };
}

describe("media submissions and idempotency", () => {
  it("creates a task (202, created:true); the exact replay returns it (200, created:false) without new work", async () => {
    const before = h.sb.stats.dispatches("POST /api/generate/image");
    const idem = freshIdem();
    const a = await submit("image", image("a fox", { ratio: "16:9", outputCount: 2 }), idem);
    expect(a.status).toBe(202);
    expect(a.sub?.created).toBe(true);
    expect(a.sub?.task.status).toBe("queued");
    // Same content, different key order: the canonical body is equal.
    const b = await submit(
      "image",
      { parameters: { outputCount: 2, ratio: "16:9" }, prompt: "a fox", model: "sandbox-image-fast" },
      idem,
    );
    expect(b.status).toBe(200);
    expect(b.sub?.created).toBe(false);
    expect(b.sub?.task.id).toBe(a.sub?.task.id);
    expect(h.sb.stats.dispatches("POST /api/generate/image")).toBe(before + 1);
  });

  it("the same identity with a changed body, or on another endpoint, is 409 IDEMPOTENCY_CONFLICT", async () => {
    const idem = freshIdem();
    await submit("image", image("one"), idem);
    const changed = await submit("image", image("two"), idem);
    expect(changed.status).toBe(409);
    expect(changed.json.error.code).toBe("IDEMPOTENCY_CONFLICT");
    const elsewhere = await submit(
      "video",
      { model: "sandbox-video-lite", prompt: "one", parameters: { mode: "text-to-video" } },
      idem,
    );
    expect(elsewhere.json.error.code).toBe("IDEMPOTENCY_CONFLICT");
  });

  it("identities belong to one key: another key's same identity is independent work", async () => {
    const other = h.sb.addKey({});
    const idem = freshIdem();
    const a = await submit("image", image("shared"), idem);
    const b = await submit("image", image("shared"), idem, other);
    expect(b.status).toBe(202);
    expect(b.sub?.task.id).not.toBe(a.sub?.task.id);
    expect((await read(a.sub?.task.id ?? "", other)).status).toBe(404);
    const r = await h.call(`/api/generate/tasks/${a.sub?.task.id}`, { method: "HEAD", key: other });
    expect(r.status).toBe(404);
  });

  it("validates against the model's capabilities, naming the field", async () => {
    const cases: [unknown, number, string, RegExp][] = [
      [image("x", { ratio: "7:5" }), 422, "INVALID_REQUEST", /parameters\.ratio/],
      [image("x", { outputCount: 5 }), 422, "INVALID_REQUEST", /outputCount/],
      [image("x", { background: "transparent" }), 422, "INVALID_REQUEST", /parameters\.background/],
      [image("x", { wobble: 1 }), 422, "INVALID_REQUEST", /parameters\.wobble/],
      [{ model: "nope", prompt: "x" }, 422, "MODEL_UNAVAILABLE", /nope/],
      [{ model: "sandbox-image-legacy", prompt: "x" }, 422, "MODEL_UNAVAILABLE", /not available/],
      [{ model: "sandbox-video-lite", prompt: "x" }, 422, "MODEL_UNAVAILABLE", /video/],
      [{ model: "sandbox-image-edit", prompt: "x" }, 422, "INVALID_REQUEST", /sourceImage/],
      [image("x", { sourceImage: "ast_nope" }), 422, "INVALID_REQUEST", /sourceImage/],
      [{ ...image("x"), referenceAssetIds: ["a"] }, 422, "INVALID_REQUEST", /referenceAssetIds/],
    ];
    for (const [body, status, code, message] of cases) {
      const r = await submit("image", body);
      expect([r.status, r.json.error?.code], JSON.stringify(body)).toEqual([status, code]);
      expect(r.json.error.message).toMatch(message);
    }
    const video = await submit("video", {
      model: "sandbox-video-lite",
      prompt: "x",
      parameters: { mode: "text-to-video", duration: 7 },
    });
    expect(video.json.error.message).toMatch(/parameters\.duration/);
    const noMode = await submit("video", { model: "sandbox-video-lite", prompt: "x" });
    expect(noMode.json.error.message).toMatch(/parameters\.mode/);
    const edit = await submit("image", {
      model: "sandbox-image-edit",
      prompt: "x",
      parameters: { sourceImage: "ast_missing" },
    });
    expect([edit.status, edit.json.error.code]).toEqual([422, "INVALID_REFERENCE"]);
    const audioNoOp = await submit("audio", {
      model: "service-voice",
      prompt: "hi",
      parameters: { voiceProfileId: "voice_en_01" },
    });
    expect(audioNoOp.json.error.message).toMatch(/operation/);
  });
});

describe("task lifecycle on the sandbox clock", () => {
  it("moves queued -> processing -> succeeded only when the clock moves; reads change nothing", async () => {
    const { sub } = await submit("image", image("lifecycle", { ratio: "1:1" }));
    const id = sub?.task.id ?? "";
    for (let i = 0; i < 5; i++) expect((await read(id)).task?.status).toBe("queued");
    h.sb.advance(1_000);
    expect((await read(id)).task?.status).toBe("processing");
    expect((await read(id)).task?.outputs[0]?.asset).toBeNull();
    h.sb.advance(2_000);
    const done = (await read(id)).task;
    expect(done?.status).toBe("succeeded");
    expect(done?.chargedGems).toBe(done?.quotedGems);
    expect(done?.releasedGems).toBe(0);
    const head = await h.call(`/api/generate/tasks/${id}`, { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([200, ""]);
    expect((await read("task_unknown")).status).toBe(404);
  });

  it("serves a real PNG at the requested ratio through a signed URL that expires", async () => {
    const { sub } = await submit("image", image("signed", { ratio: "16:9" }));
    h.sb.advance(3_000);
    const url = (await read(sub?.task.id ?? "")).task?.outputs[0]?.asset?.url ?? "";
    const file = await download(url);
    expect([file.status, file.type]).toEqual([200, "image/png"]);
    const png = decodePng(file.bytes);
    expect([png.width, png.height]).toEqual([320, 180]);
    const tampered = await fetch(url.replace(/sig=[^&]+/, "sig=AAAA"));
    expect(tampered.status).toBe(403);
    expect(await tampered.json()).toEqual({
      error: { message: expect.any(String), code: "INVALID_SIGNATURE" },
    });
    h.sb.advance(11 * 60_000);
    const expired = await fetch(url);
    expect(expired.status).toBe(403);
    expect(((await expired.json()) as ErrorBody).error.code).toBe("URL_EXPIRED");
    const fresh = (await read(sub?.task.id ?? "")).task?.outputs[0]?.asset?.url ?? "";
    expect(fresh).not.toBe(url);
    expect((await download(fresh)).status).toBe(200);
  });

  it("partial and failed tasks settle so charged + released = quoted", async () => {
    const partial = await submit("image", image(`four ${SANDBOX_MARKERS.partial}`, { outputCount: 4 }));
    const failed = await submit("image", image(`none ${SANDBOX_MARKERS.fail}`, { outputCount: 2 }));
    h.sb.advance(3_000);
    const p = (await read(partial.sub?.task.id ?? "")).task;
    expect(p?.status).toBe("partial");
    expect(p?.outputs.map((o) => o.status)).toEqual(["succeeded", "succeeded", "failed", "failed"]);
    expect(p?.outputs[3]?.asset).toBeNull();
    expect(p?.chargedGems).toBe(4);
    expect((p?.chargedGems ?? 0) + (p?.releasedGems ?? 0)).toBe(p?.quotedGems);
    const f = (await read(failed.sub?.task.id ?? "")).task;
    expect(f?.status).toBe("failed");
    expect(f?.error).toEqual({ code: "GENERATION_FAILED", message: expect.any(String) });
    expect([f?.chargedGems, f?.releasedGems]).toEqual([0, f?.quotedGems]);
  });

  it("video outputs are MP4 of the requested duration; music is WAV of the requested length", async () => {
    const v = await submit("video", {
      model: "sandbox-video-pro",
      prompt: "waves",
      parameters: { mode: "text-to-video", duration: 6, ratio: "9:16", resolution: "1080p", audio: "on" },
    });
    expect(v.sub?.task.quotedGems).toBe(Math.ceil(10 * 6 * 2 * 1.5));
    const m = await submit("audio", {
      model: "sandbox-music",
      prompt: "a song",
      operation: "music",
      parameters: { musicMode: "advanced", duration: "60", title: "T" },
    });
    const sp = await submit("audio", {
      model: "service-voice",
      prompt: "Hello from the sandbox, this is a test sentence.",
      operation: "speech",
      parameters: { voiceProfileId: "voice_fr_03", speed: 1.5 },
    });
    h.sb.advance(10_000);
    const vt = (await read(v.sub?.task.id ?? "")).task;
    expect(vt?.status).toBe("succeeded");
    const vf = await download(vt?.outputs[0]?.asset?.url ?? "");
    expect(await fileTypeFromBuffer(vf.bytes)).toEqual({ ext: "mp4", mime: "video/mp4" });
    expect((await parseBuffer(vf.bytes, { mimeType: "video/mp4" })).format.duration).toBeCloseTo(6, 3);
    const mf = await download((await read(m.sub?.task.id ?? "")).task?.outputs[0]?.asset?.url ?? "");
    expect(mf.type).toBe("audio/wav");
    expect((await parseBuffer(mf.bytes, { mimeType: "audio/wav" })).format.duration).toBeCloseTo(60, 3);
    const sf = await download((await read(sp.sub?.task.id ?? "")).task?.outputs[0]?.asset?.url ?? "");
    const speech = await parseBuffer(sf.bytes, { mimeType: "audio/wav" });
    expect(speech.format.duration).toBeGreaterThan(1);
    expect(speech.format.container).toBe("WAVE");
  });

  it("audio rules: voices must exist, voice_clone needs an own private voice, music modes are enforced", async () => {
    const unknownVoice = await submit("audio", {
      model: "service-voice",
      prompt: "hi",
      operation: "speech",
      parameters: { voiceProfileId: "voice_zz" },
    });
    expect([unknownVoice.status, unknownVoice.json.error.code]).toEqual([422, "INVALID_REFERENCE"]);
    const clonePublic = await submit("audio", {
      model: "service-voice",
      prompt: "hi",
      operation: "voice_clone",
      parameters: { voiceProfileId: "voice_en_01" },
    });
    expect(clonePublic.json.error.code).toBe("INVALID_REFERENCE");
    const simpleWithTitle = await submit("audio", {
      model: "sandbox-music",
      prompt: "x",
      operation: "music",
      parameters: { title: "t" },
    });
    expect(simpleWithTitle.json.error.message).toMatch(/parameters\.title/);
    const wrongOp = await submit("audio", {
      model: "sandbox-music",
      prompt: "x",
      operation: "speech",
      parameters: { voiceProfileId: "voice_en_01" },
    });
    expect(wrongOp.json.error.message).toMatch(/operation/);
    const long = await submit("audio", {
      model: "service-voice",
      prompt: "x".repeat(2_001),
      operation: "speech",
      parameters: { voiceProfileId: "voice_en_01" },
    });
    expect(long.json.error.message).toMatch(/prompt/);
    const opOnImage = await submit("image", { ...image("x"), operation: "music" });
    expect(opOnImage.json.error.message).toMatch(/operation/);
  });
});
