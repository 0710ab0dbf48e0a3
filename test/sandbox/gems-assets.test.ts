import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AssetEnvelopeSchema,
  SubmissionSchema,
  VoiceEnvelopeSchema,
  VoiceListSchema,
} from "../../src/client/schemas.js";
import { renderVideo } from "../../src/sandbox/media/mp4.js";
import { renderImage } from "../../src/sandbox/media/png.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import { freshIdem, type Harness, startSandbox } from "./sandbox-helpers.js";

type Body = { error: { code?: string; message: string } } & Record<string, unknown>;
let h: Harness;
beforeAll(async () => {
  h = await startSandbox();
});
afterAll(() => h.close());

async function post(path: string, body: unknown, key?: string, idem = freshIdem()) {
  const r = await h.post(path, body, key ? { key, idem } : { idem });
  return { status: r.status, body: (await r.json()) as Body };
}

async function upload(bytes: Uint8Array, type: string, key?: string) {
  const r = await h.call("/api/generate/assets", {
    method: "POST",
    body: bytes,
    headers: { "content-type": type, "x-filename": "clip.bin" },
    ...(key ? { key } : {}),
  });
  return { status: r.status, body: (await r.json()) as Body };
}

describe("Gems: quotes, maxGems, caps, settlement", () => {
  it("maxGems below the quote is 409 PRICE_CHANGED and creates nothing", async () => {
    const before = h.sb.stats.dispatches("POST /api/generate/image");
    const body = {
      model: "sandbox-image-pro",
      prompt: "x",
      parameters: { resolution: "2K", outputCount: 2 },
      maxGems: 31,
    };
    const r = await post("/api/generate/image", body);
    expect([r.status, r.body.error.code]).toEqual([409, "PRICE_CHANGED"]);
    expect(r.body.error.message).toMatch(/32/);
    const ok = await post("/api/generate/image", { ...body, maxGems: 32 });
    expect(SubmissionSchema.parse(ok.body).task.quotedGems).toBe(32);
    expect(h.sb.stats.dispatches("POST /api/generate/image")).toBe(before + 1);
  });

  it("outstanding reservations count against the monthly cap until they settle", async () => {
    const key = h.sb.addKey({ capGems: 10 });
    const img = (p: string) => ({ model: "sandbox-image-fast", prompt: p, parameters: { outputCount: 4 } }); // 8 Gems
    expect((await post("/api/generate/image", img("a"), key)).status).toBe(202);
    const over = await post("/api/generate/image", img("b"), key);
    expect([over.status, over.body.error.code]).toEqual([402, "API_KEY_LIMIT"]);
    h.sb.advance(3_000); // the first settles: 8 charged this month, still no room for 8 more
    expect((await post("/api/generate/image", img("c"), key)).status).toBe(402);
    const small = { model: "sandbox-image-fast", prompt: "d" }; // 2 Gems fits exactly
    expect((await post("/api/generate/image", small, key)).status).toBe(202);
  });

  it("a failed task releases its reservation, freeing the cap again", async () => {
    const key = h.sb.addKey({ capGems: 8 });
    const img = (p: string) => ({ model: "sandbox-image-fast", prompt: p, parameters: { outputCount: 4 } });
    expect((await post("/api/generate/image", img("x [sandbox:fail]"), key)).status).toBe(202);
    expect((await post("/api/generate/image", img("y"), key)).status).toBe(402);
    h.sb.advance(3_000);
    expect((await post("/api/generate/image", img("z"), key)).status).toBe(202);
  });

  it("the account balance is separate from the cap: past it, 402 INSUFFICIENT_BALANCE", async () => {
    const key = h.sb.addKey({ capGems: 1_000, balanceGems: 5 });
    const r = await post(
      "/api/generate/image",
      { model: "sandbox-image-fast", prompt: "b", parameters: { outputCount: 3 } },
      key,
    );
    expect([r.status, r.body.error.code]).toEqual([402, "INSUFFICIENT_BALANCE"]);
    expect(
      (await post("/api/generate/image", { model: "sandbox-image-fast", prompt: "b" }, key)).status,
    ).toBe(202);
  });

  it("text reserves a conservative maximum from input size and max_tokens", async () => {
    const chat = {
      model: "sandbox-chat-large",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 8_000,
    };
    const r = await post("/api/generate/text/v1/chat/completions", { ...chat, maxGems: 1 });
    expect([r.status, r.body.error.code]).toEqual([409, "PRICE_CHANGED"]);
    const capped = h.sb.addKey({ capGems: 5 });
    const c = await post("/api/generate/text/v1/chat/completions", chat, capped);
    expect(c.body.error.code).toBe("API_KEY_LIMIT");
    const fits = await post("/api/generate/text/v1/chat/completions", { ...chat, max_tokens: 100 }, capped);
    expect(fits.status).toBe(200);
  });
});

describe("uploaded assets", () => {
  it("stores media checked by type, becomes ready after a short delay, and serves its bytes", async () => {
    const png = renderImage("upload", "1:1");
    const r = await upload(png, "image/png");
    expect(r.status).toBe(201);
    const asset = AssetEnvelopeSchema.parse(r.body).asset;
    expect([asset.kind, asset.state, asset.url]).toEqual(["image", "processing", null]);
    const edit = { model: "sandbox-image-edit", prompt: "edit", parameters: { sourceImage: asset.id } };
    const early = await post("/api/generate/image", edit);
    expect([early.status, early.body.error.code]).toEqual([409, "REFERENCES_PROCESSING"]);
    h.sb.advance(1_000);
    expect((await post("/api/generate/image", edit)).status).toBe(202);
  });

  it("refuses a wrong Content-Type, bytes that disagree, empty bodies, and > 30 MiB with 413", async () => {
    expect((await upload(renderImage("x", "1:1"), "text/plain")).status).toBe(422);
    const mismatch = await upload(renderAudio("x", 1), "image/png");
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.error.message).toMatch(/audio\/wav/);
    expect((await upload(Buffer.from("not media at all"), "image/png")).status).toBe(422);
    expect((await upload(new Uint8Array(0), "image/png")).status).toBe(422);
    const big = Buffer.alloc(31_457_281);
    big.set(renderImage("x", "1:1"));
    const tooBig = await upload(big, "image/png");
    expect(tooBig.status).toBe(413);
    expect(Object.keys(tooBig.body)).toEqual(["error"]);
  });

  it("another key's asset or an unknown id is 422 INVALID_REFERENCE", async () => {
    const other = h.sb.addKey({});
    const mine = AssetEnvelopeSchema.parse(
      (await upload(renderImage("o", "1:1"), "image/png", other)).body,
    ).asset;
    h.sb.advance(1_000);
    for (const id of [mine.id, "ast_unknown"]) {
      const r = await post("/api/generate/image", {
        model: "sandbox-image-edit",
        prompt: "e",
        parameters: { sourceImage: id },
      });
      expect([r.status, r.body.error.code]).toEqual([422, "INVALID_REFERENCE"]);
    }
    const video = AssetEnvelopeSchema.parse(
      (await upload(renderVideo("v", 2, "16:9"), "video/mp4")).body,
    ).asset;
    expect(video.kind).toBe("video");
    h.sb.advance(1_000);
    const wrongKind = await post("/api/generate/image", {
      model: "sandbox-image-edit",
      prompt: "e",
      parameters: { sourceImage: video.id },
    });
    expect(wrongKind.body.error.code).toBe("INVALID_REFERENCE");
  });
});

describe("voices", () => {
  it("explore pages hold up to 50 voices, with a language filter and pagination fields", async () => {
    const page = async (q: string) => {
      const r = await h.call(`/api/generate/voices?${q}`);
      expect(r.status).toBe(200);
      return VoiceListSchema.parse(await r.json()) as ReturnType<typeof VoiceListSchema.parse> &
        Record<string, unknown>;
    };
    const p1 = await page("scope=explore");
    expect(p1.voices).toHaveLength(50);
    expect([p1.page, p1.perPage, p1.hasMore, p1.total]).toEqual([1, 50, true, 120]);
    const p3 = await page("scope=explore&page=3");
    expect([p3.voices.length, p3.hasMore]).toEqual([20, false]);
    const fr = await page("scope=explore&language=fr");
    expect(fr.voices).toHaveLength(20);
    expect(fr.voices.every((v) => v.language === "fr")).toBe(true);
    expect((await page("")).voices).toEqual([]);
    expect((await h.call("/api/generate/voices?page=0")).status).toBe(422);
    expect((await h.call("/api/generate/voices?scope=all")).status).toBe(422);
  });

  it("uploads a recording as a private draft in `mine`, usable for voice_clone by its owner only", async () => {
    const form = (fields: Record<string, string | Blob>) => {
      const f = new FormData();
      for (const [k, v] of Object.entries(fields)) f.append(k, v, ...(v instanceof Blob ? ["me.wav"] : []));
      return h.call("/api/generate/voices", { method: "POST", body: f });
    };
    const wav = new Blob([renderAudio("me", 2)], { type: "audio/wav" });
    const bad = [
      { file: wav, duration: "20", rightsConfirmed: "yes" },
      { file: wav, duration: "10", rightsConfirmed: "true" },
      { file: wav, duration: "20", rightsConfirmed: "true", name: "x" },
      { file: new Blob([renderImage("x", "1:1")]), duration: "20", rightsConfirmed: "true" },
      { duration: "20", rightsConfirmed: "true" },
    ];
    for (const fields of bad)
      expect((await form(fields)).status, JSON.stringify(Object.keys(fields))).toBe(422);
    const ok = await form({ file: wav, duration: "20", rightsConfirmed: "true" });
    expect(ok.status).toBe(201);
    const voice = VoiceEnvelopeSchema.parse(await ok.json()).voice;
    const mine = VoiceListSchema.parse(await (await h.call("/api/generate/voices?scope=mine")).json());
    expect(mine.voices.map((v) => v.id)).toEqual([voice.id]);
    const clone = {
      model: "service-voice",
      prompt: "hello",
      operation: "voice_clone",
      parameters: { voiceProfileId: voice.id },
    };
    expect((await post("/api/generate/audio", clone)).status).toBe(202);
    const other = h.sb.addKey({});
    expect((await post("/api/generate/audio", clone, other)).body.error.code).toBe("INVALID_REFERENCE");
  });
});

describe("video references", () => {
  it("reference videos longer than the model's referenceDurations are refused; shorter ones are used", async () => {
    const up = async (secs: number) =>
      AssetEnvelopeSchema.parse((await upload(renderVideo(`ref${secs}`, secs, "16:9"), "video/mp4")).body)
        .asset.id;
    const short = await up(4);
    const long = await up(12);
    h.sb.advance(1_000);
    const body = (id: string) => ({
      model: "sandbox-video-pro",
      prompt: "with a reference",
      parameters: { mode: "text-to-video", referenceVideos: [id] },
    });
    const refused = await post("/api/generate/video", body(long));
    expect([refused.status, refused.body.error.code]).toEqual([422, "INVALID_REFERENCE"]);
    expect(refused.body.error.message).toMatch(/at most 10 s/);
    expect((await post("/api/generate/video", body(short))).status).toBe(202);
    const lite = await post("/api/generate/video", { ...body(short), model: "sandbox-video-lite" });
    expect(lite.body.error.message).toMatch(/parameters\.referenceVideos/);
  });
});

describe("the UTC calendar month", () => {
  it("charges count in the month they settle; a new month frees the cap, but not from outstanding reservations", async () => {
    const m = await startSandbox({ now: () => Date.UTC(2027, 0, 31, 23, 58, 0) });
    try {
      const key = m.sb.addKey({ capGems: 10 });
      const img = (p: string) => ({ model: "sandbox-image-fast", prompt: p, parameters: { outputCount: 4 } });
      const send = async (p: string) => (await m.post("/api/generate/image", img(p), { key })).status;
      expect(await send("january")).toBe(202);
      m.sb.advance(3_000); // settled in January: 8 charged
      expect(await send("still january")).toBe(402);
      m.sb.advance(2 * 60_000); // February: January's charges no longer count
      expect(await send("february")).toBe(202);
    } finally {
      await m.close();
    }
    const n = await startSandbox({ now: () => Date.UTC(2027, 1, 28, 23, 59, 30) });
    try {
      const key = n.sb.addKey({ capGems: 10 });
      const send = async (p: string) =>
        (
          await n.post(
            "/api/generate/image",
            { model: "sandbox-image-fast", prompt: p, parameters: { outputCount: 4 } },
            { key },
          )
        ).status;
      expect(await send("late february [sandbox:slow]")).toBe(202); // 8 reserved for 60 s
      n.sb.advance(40_000); // March, the February reservation still outstanding
      expect(await send("march")).toBe(402);
      n.sb.advance(30_000); // settled, charged in March
      expect(await send("march again")).toBe(402);
    } finally {
      await n.close();
    }
  });
});
