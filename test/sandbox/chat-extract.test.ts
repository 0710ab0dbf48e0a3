import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AssetEnvelopeSchema,
  ChatChunkSchema,
  ChatCompletionSchema,
  ExtractionResponseSchema,
  SubmissionSchema,
  TaskEnvelopeSchema,
} from "../../src/client/schemas.js";
import { renderVideo } from "../../src/sandbox/media/mp4.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import { SANDBOX_EXTRACTION_MODEL } from "../../src/sandbox/sandbox.js";
import { freshIdem, type Harness, startSandbox } from "./sandbox-helpers.js";

let h: Harness;
beforeAll(async () => {
  h = await startSandbox();
});
afterAll(() => h.close());

const CHAT = "/api/generate/text/v1/chat/completions";
const chatBody = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "sandbox-chat-small",
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content },
  ],
  ...extra,
});

/** Parses an SSE body into data payloads. */
async function sseData(r: Response): Promise<string[]> {
  const text = await r.text();
  return text
    .split("\n\n")
    .filter((f) => f.startsWith("data: "))
    .map((f) => f.slice(6));
}

function accumulate(frames: string[]): { content: string; done: boolean; usage: unknown; chunks: number } {
  let content = "";
  let usage: unknown;
  let chunks = 0;
  for (const f of frames.filter((x) => x !== "[DONE]")) {
    const c = ChatChunkSchema.parse(JSON.parse(f));
    chunks++;
    content += c.choices[0]?.delta?.content ?? "";
    if (c.usage) usage = c.usage;
  }
  return { content, done: frames.at(-1) === "[DONE]", usage, chunks };
}

describe("chat completions", () => {
  it("answers deterministically from the messages, as JSON", async () => {
    const r = await h.post(CHAT, chatBody("What is the sandbox?"));
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    const c = ChatCompletionSchema.parse(await r.json());
    expect(c.choices[0]?.message.content).toMatch(
      /^Sandbox answer to: What is the sandbox\? \[[0-9a-f]{8}\]$/,
    );
    expect(c.choices[0]?.finish_reason).toBe("stop");
    expect(c.usage?.total_tokens).toBe((c.usage?.prompt_tokens ?? 0) + (c.usage?.completion_tokens ?? 0));
    const again = ChatCompletionSchema.parse(
      await (await h.post(CHAT, chatBody("What is the sandbox?"))).json(),
    );
    expect(again.choices[0]?.message.content).toBe(c.choices[0]?.message.content);
    expect(again.id).not.toBe(c.id);
  });

  it("streams several content chunks, a final chunk with usage, then [DONE]; the replay is one chunk", async () => {
    const idem = freshIdem();
    const body = chatBody("Tell me a long story about the sea and ships", { stream: true });
    const r = await h.post(CHAT, body, { idem });
    expect(r.headers.get("content-type")).toMatch(/text\/event-stream/);
    const first = accumulate(await sseData(r));
    expect(first.done).toBe(true);
    expect(first.chunks).toBeGreaterThan(3);
    expect(first.usage).toBeTruthy();
    const before = h.sb.stats.dispatches(`POST ${CHAT}`);
    const replay = accumulate(await sseData(await h.post(CHAT, body, { idem })));
    expect(replay).toMatchObject({ content: first.content, done: true, chunks: 2 });
    expect(h.sb.stats.dispatches(`POST ${CHAT}`)).toBe(before);
    const conflict = await h.post(CHAT, { ...body, stream: false }, { idem });
    expect(conflict.status).toBe(409);
  });

  it("json_object returns valid JSON text; max_tokens truncates with finish_reason length", async () => {
    const j = ChatCompletionSchema.parse(
      await (
        await h.post(CHAT, chatBody("json please", { response_format: { type: "json_object" } }))
      ).json(),
    );
    expect(JSON.parse(j.choices[0]?.message.content ?? "")).toHaveProperty("answer");
    const short = ChatCompletionSchema.parse(
      await (await h.post(CHAT, chatBody("one two three four five", { max_tokens: 3 }))).json(),
    );
    expect(short.choices[0]?.message.content).toBe("Sandbox answer to:");
    expect(short.choices[0]?.finish_reason).toBe("length");
  });

  it("refuses bad bodies by field, unknown models, and oversized requests", async () => {
    const cases: [unknown, number, string][] = [
      [{ ...chatBody("x"), tools: [] }, 422, "INVALID_REQUEST"],
      [
        { model: "sandbox-chat-small", messages: [{ role: "user", content: [{ type: "text" }] }] },
        422,
        "INVALID_REQUEST",
      ],
      [chatBody("x", { max_tokens: 9_000 }), 422, "INVALID_REQUEST"],
      [{ ...chatBody("x"), model: "sandbox-image-fast" }, 422, "MODEL_UNAVAILABLE"],
    ];
    for (const [body, status, code] of cases) {
      const r = await h.post(CHAT, body);
      expect([r.status, ((await r.json()) as { error: { code: string } }).error.code]).toEqual([
        status,
        code,
      ]);
    }
    const big = {
      model: "sandbox-chat-small",
      messages: Array.from({ length: 6 }, () => ({ role: "user", content: "x".repeat(29_000) })),
    };
    expect((await h.post(CHAT, big)).status).toBe(413);
  });
});

describe("video extraction", () => {
  async function uploadVideo(bytes: Uint8Array, type = "video/mp4"): Promise<string> {
    const r = await h.call("/api/generate/assets", {
      method: "POST",
      body: bytes,
      headers: { "content-type": type },
    });
    return AssetEnvelopeSchema.parse(await r.json()).asset.id;
  }
  const extract = (videoAssetId: string, extra: Record<string, unknown> = {}, idem = freshIdem()) =>
    h.post(
      "/api/generate/extract/video",
      { model: SANDBOX_EXTRACTION_MODEL, videoAssetId, ...extra },
      { idem },
    );

  it("analyses a video that has no audio track: its duration comes from the movie header", async () => {
    const id = await uploadVideo(renderVideo("a silent clip", 5, "9:16", { audio: false }));
    h.sb.advance(1_000);
    const r = await extract(id);
    expect(r.status).toBe(200);
    const res = ExtractionResponseSchema.parse(await r.json());
    expect((res.extraction as unknown as { durationSeconds: number }).durationSeconds).toBe(5);
  });

  it("analyses an uploaded video: unique in-range frames, non-overlapping segments; replay returns the saved result", async () => {
    const id = await uploadVideo(renderVideo("clip", 7, "16:9"));
    const early = await extract(id);
    expect(early.status).toBe(409);
    h.sb.advance(1_000);
    const idem = freshIdem();
    const r = await extract(id, { prompt: "what happens?" }, idem);
    expect(r.status).toBe(200);
    const res = ExtractionResponseSchema.parse(await r.json());
    const { durationSeconds, frames, segments } = res.extraction as unknown as {
      durationSeconds: number;
      frames: { timeSeconds: number }[];
      segments: { startSeconds: number; endSeconds: number }[];
    };
    expect(durationSeconds).toBeCloseTo(7, 2);
    const times = frames.map((f) => f.timeSeconds);
    expect(new Set(times).size).toBe(times.length);
    for (const t of times) expect(t >= 0 && t <= durationSeconds).toBe(true);
    for (let i = 1; i < segments.length; i++) {
      expect(segments[i]?.startSeconds).toBeGreaterThanOrEqual(segments[i - 1]?.endSeconds ?? Number.NaN);
    }
    const replay = ExtractionResponseSchema.parse(
      await (await extract(id, { prompt: "what happens?" }, idem)).json(),
    );
    expect(replay).toEqual(res);
  });

  it("works on a generated video output, and refuses wrong model, kind, length and owner", async () => {
    const sub = await h.post("/api/generate/video", {
      model: "sandbox-video-lite",
      prompt: "v",
      parameters: { mode: "text-to-video" },
    });
    const taskId = SubmissionSchema.parse(await sub.json()).task.id;
    h.sb.advance(10_000);
    const task = TaskEnvelopeSchema.parse(await (await h.call(`/api/generate/tasks/${taskId}`)).json()).task;
    const out = task.outputs[0]?.asset?.id ?? "";
    expect((await extract(out)).status).toBe(200);
    expect(
      ((await (await extract(out, { model: "other" })).json()) as { error: { code: string } }).error.code,
    ).toBe("MODEL_UNAVAILABLE");
    const audio = await uploadVideo(renderAudio("a", 2), "audio/wav");
    const long = await uploadVideo(renderVideo("long", 120, "1:1"));
    h.sb.advance(1_000);
    expect(((await (await extract(audio)).json()) as { error: { code: string } }).error.code).toBe(
      "INVALID_REFERENCE",
    );
    const tooLong = await extract(long);
    expect(tooLong.status).toBe(422);
    const other = h.sb.addKey({});
    const theirs = await h.post(
      "/api/generate/extract/video",
      { model: SANDBOX_EXTRACTION_MODEL, videoAssetId: out },
      { key: other },
    );
    expect(theirs.status).toBe(422);
    expect(
      (
        await h.post("/api/generate/extract/video", {
          model: SANDBOX_EXTRACTION_MODEL,
          videoAssetId: out,
          x: 1,
        })
      ).status,
    ).toBe(422);
  });

  it("an unparseable analysis is 409 ANALYSIS_FAILED, billed and retained for replay", async () => {
    const id = await uploadVideo(renderVideo("c", 3, "16:9"));
    h.sb.advance(1_000);
    const idem = freshIdem();
    const before = h.sb.stats.dispatches("POST /api/generate/extract/video");
    const a = await extract(id, { prompt: "[sandbox:analysis-failed]" }, idem);
    const b = await extract(id, { prompt: "[sandbox:analysis-failed]" }, idem);
    expect([a.status, b.status]).toEqual([409, 409]);
    expect(await b.json()).toEqual(await a.json());
    expect(h.sb.stats.dispatches("POST /api/generate/extract/video")).toBe(before + 1);
  });
});

describe("limits and revocation", () => {
  it("extraction refuses bodies over 16,000 bytes (413) and maxGems under its reservation (409)", async () => {
    const big = await h.post("/api/generate/extract/video", {
      model: SANDBOX_EXTRACTION_MODEL,
      videoAssetId: "a",
      prompt: "x".repeat(16_001),
    });
    expect(big.status).toBe(413);
    const r = await h.call("/api/generate/assets", {
      method: "POST",
      body: renderVideo("g", 2, "16:9"),
      headers: { "content-type": "video/mp4" },
    });
    const id = AssetEnvelopeSchema.parse(await r.json()).asset.id;
    h.sb.advance(1_000);
    const cheap = await h.post("/api/generate/extract/video", {
      model: SANDBOX_EXTRACTION_MODEL,
      videoAssetId: id,
      maxGems: 1,
    });
    expect([cheap.status, ((await cheap.json()) as { error: { code: string } }).error.code]).toEqual([
      409,
      "PRICE_CHANGED",
    ]);
  });

  it("a revoked key loses all access, replays of saved answers included", async () => {
    const key = h.sb.addKey({});
    const idem = freshIdem();
    expect((await h.post(CHAT, chatBody("keep"), { key, idem })).status).toBe(200);
    expect(h.sb.revokeKey(key)).toBe(true);
    const replay = await h.post(CHAT, chatBody("keep"), { key, idem });
    expect(replay.status).toBe(401);
  });
});
