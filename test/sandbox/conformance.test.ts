/**
 * Holds each sandbox response against the field tables of docs/service.md: every required
 * field present, and no field where the service closes the object (docs/service.md#responses).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderVideo } from "../../src/sandbox/media/mp4.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import { SANDBOX_EXTRACTION_MODEL } from "../../src/sandbox/sandbox.js";
import { freshIdem, type Harness, startSandbox } from "./sandbox-helpers.js";

type Obj = Record<string, unknown>;
let h: Harness;
beforeAll(async () => {
  h = await startSandbox();
});
afterAll(() => h.close());

/** Required keys all present; when `closed`, nothing else either. */
function fields(o: unknown, required: string[], optional: string[] = [], closed = true): Obj {
  expect(o).toBeTypeOf("object");
  const obj = o as Obj;
  for (const k of required) expect(obj, `missing ${k}`).toHaveProperty(k);
  if (closed)
    for (const k of Object.keys(obj)) expect([...required, ...optional], `extra field ${k}`).toContain(k);
  return obj;
}

function errorEnvelope(body: unknown): void {
  const env = fields(body, ["error"]);
  const e = fields(env.error, ["message"], ["code"]);
  expect(e.message).toBeTypeOf("string");
  if ("code" in e) expect(e.code).toBeTypeOf("string");
}

function task(t: unknown): void {
  const o = fields(t, ["id", "status", "quotedGems", "chargedGems", "releasedGems", "error", "outputs"]);
  expect(["queued", "processing", "succeeded", "partial", "failed", "cancelled"]).toContain(o.status);
  for (const k of ["quotedGems", "chargedGems", "releasedGems"]) expect(o[k]).toBeTypeOf("number");
  if (o.error !== null) fields(o.error, ["code", "message"]);
  for (const out of o.outputs as unknown[]) {
    const item = fields(out, ["index", "status", "asset"]);
    expect(Number.isInteger(item.index)).toBe(true);
    if (item.asset !== null) fields(item.asset, ["id", "kind", "mimeType", "url"]);
  }
}

const json = async (r: Response): Promise<unknown> => r.json();

describe("conformance with the field tables of docs/service.md", () => {
  it("models: {models, accountingPeriod}; entries only id/name/kind/available/baseGems/capabilities", async () => {
    const body = fields(await json(await h.call("/api/generate/models")), ["models", "accountingPeriod"]);
    expect(body.accountingPeriod).toBe("UTC calendar month");
    for (const m of body.models as unknown[]) {
      const o = fields(m, ["id", "name", "kind", "capabilities"], ["available", "baseGems"]);
      expect(["image", "video", "audio", "text"]).toContain(o.kind);
      if (o.kind === "video") expect(o).not.toHaveProperty("available");
      else expect(o.available).toBeTypeOf("boolean");
      if (o.kind === "image") expect(o.baseGems).toBeTypeOf("number");
      else expect(o).not.toHaveProperty("baseGems");
    }
  });

  it("submissions are {task, created}; task GET is only {task}; HEAD has no body", async () => {
    for (const [kind, body] of [
      ["image", { model: "sandbox-image-fast", prompt: "c" }],
      ["video", { model: "sandbox-video-lite", prompt: "c", parameters: { mode: "text-to-video" } }],
      ["audio", { model: "sandbox-music", prompt: "c", operation: "music" }],
    ] as const) {
      const sub = fields(await json(await h.post(`/api/generate/${kind}`, body)), ["task", "created"]);
      task(sub.task);
      const id = (sub.task as Obj).id as string;
      h.sb.advance(10_000);
      const got = fields(await json(await h.call(`/api/generate/tasks/${id}`)), ["task"]);
      task(got.task);
      expect((got.task as Obj).status).toBe("succeeded");
      const head = await h.call(`/api/generate/tasks/${id}`, { method: "HEAD" });
      expect([head.status, (await head.arrayBuffer()).byteLength]).toEqual([200, 0]);
    }
    const missing = await h.call("/api/generate/tasks/nope", { method: "HEAD" });
    expect([missing.status, (await missing.arrayBuffer()).byteLength]).toEqual([404, 0]);
  });

  it("assets, voices, chat and extraction carry their required fields", async () => {
    const up = await h.call("/api/generate/assets", {
      method: "POST",
      body: renderVideo("c", 2, "16:9"),
      headers: { "content-type": "video/mp4" },
    });
    expect(up.status).toBe(201);
    const asset = fields(fields(await json(up), ["asset"]).asset, ["id", "kind", "state", "url"]);
    h.sb.advance(1_000);
    const list = fields(
      await json(await h.call("/api/generate/voices?scope=explore")),
      ["voices"],
      [],
      false,
    );
    for (const v of list.voices as unknown[]) fields(v, ["id", "name"], [], false);
    const form = new FormData();
    form.append("file", new Blob([renderAudio("v", 1)]), "v.wav");
    form.append("duration", "30");
    form.append("rightsConfirmed", "true");
    const voice = await h.call("/api/generate/voices", { method: "POST", body: form });
    expect(voice.status).toBe(201);
    fields(fields(await json(voice), ["voice"]).voice, ["id", "name"], [], false);
    const chat = { model: "sandbox-chat-small", messages: [{ role: "user", content: "hi" }] };
    const completion = fields(await json(await h.post("/api/generate/text/v1/chat/completions", chat)), [
      "id",
      "object",
      "created",
      "model",
      "choices",
      "usage",
    ]);
    expect(completion.object).toBe("chat.completion");
    expect(Number.isInteger(completion.created)).toBe(true);
    fields((completion.choices as unknown[])[0], ["message", "finish_reason"], ["index"]);
    const ext = await h.post("/api/generate/extract/video", {
      model: SANDBOX_EXTRACTION_MODEL,
      videoAssetId: asset.id,
    });
    const res = fields(await json(ext), ["id", "extraction"]);
    fields(res.extraction, ["analysis", "durationSeconds", "frames"], ["segments"]);
  });

  it("every error, on every endpoint, is exactly the envelope", async () => {
    const gen = h.sb.addKey({ scopes: ["generate"] });
    const responses: Response[] = [
      await h.call("/api/generate/models", { key: null }),
      await h.call("/api/generate/models", { key: gen }),
      await h.call("/api/generate/tasks/none"),
      await h.call("/api/generate/voices?page=x"),
      await h.call("/api/generate/nowhere"),
      await h.post("/api/generate/image", { model: "x", prompt: "y" }),
      await h.post("/api/generate/video", { model: "sandbox-video-lite", prompt: "y", extra: 1 }),
      await h.post("/api/generate/audio", { model: "service-voice", prompt: "y" }),
      await h.post("/api/generate/text/v1/chat/completions", { model: "sandbox-chat-small", messages: [] }),
      await h.post("/api/generate/extract/video", { model: "wrong", videoAssetId: "a" }),
      await h.call("/api/generate/assets", {
        method: "POST",
        body: "x",
        headers: { "content-type": "text/plain" },
      }),
      await h.call("/api/generate/voices", { method: "POST", body: new FormData() }),
      await h.call("/api/generate/image", {
        method: "POST",
        body: "[",
        headers: { "content-type": "application/json" },
        idem: freshIdem(),
      }),
      await fetch(`${h.base}/sandbox/files/ast_x?exp=1&sig=bad`),
    ];
    for (const r of responses) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.headers.get("content-type")).toMatch(/application\/json/);
      errorEnvelope(await r.json());
    }
  });
});
