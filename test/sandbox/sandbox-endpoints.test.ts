import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorEnvelopeSchema, ModelListSchema } from "../../src/client/schemas.js";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { type Harness, startSandbox } from "./sandbox-helpers.js";

let h: Harness;
beforeAll(async () => {
  h = await startSandbox();
});
afterAll(() => h.close());

async function expectError(r: Response, status: number, code?: string): Promise<string> {
  expect(r.status).toBe(status);
  const body = ErrorEnvelopeSchema.parse(await r.json());
  expect(body.error.code).toBe(code);
  return body.error.message;
}

describe("authentication and scopes", () => {
  it("refuses a missing, malformed or unknown key with 401 INVALID_API_KEY", async () => {
    await expectError(await h.call("/api/generate/models", { key: null }), 401, "INVALID_API_KEY");
    await expectError(await h.call("/api/generate/models", { key: "nope" }), 401, "INVALID_API_KEY");
    await expectError(
      await h.call("/api/generate/models", { key: `lgk_${"0".repeat(64)}` }),
      401,
      "INVALID_API_KEY",
    );
    const viaQuery = await fetch(`${h.base}/api/generate/models?key=${SANDBOX_API_KEY}`);
    await expectError(viaQuery, 401, "INVALID_API_KEY");
    const viaApikey = await fetch(`${h.base}/api/generate/models`, { headers: { apikey: SANDBOX_API_KEY } });
    await expectError(viaApikey, 401, "INVALID_API_KEY");
  });

  it("a generate-only key cannot list models or read tasks; a read-only key cannot submit", async () => {
    const gen = h.sb.addKey({ scopes: ["generate"] });
    const read = h.sb.addKey({ scopes: ["read"] });
    await expectError(await h.call("/api/generate/models", { key: gen }), 403, "INSUFFICIENT_SCOPE");
    await expectError(await h.call("/api/generate/voices", { key: gen }), 403, "INSUFFICIENT_SCOPE");
    await expectError(await h.call("/api/generate/tasks/task_x", { key: gen }), 403, "INSUFFICIENT_SCOPE");
    const r = await h.post(
      "/api/generate/image",
      { model: "sandbox-image-fast", prompt: "x" },
      { key: read },
    );
    await expectError(r, 403, "INSUFFICIENT_SCOPE");
    expect((await h.call("/api/generate/models", { key: read })).status).toBe(200);
    const sub = await h.post(
      "/api/generate/image",
      { model: "sandbox-image-fast", prompt: "x" },
      { key: gen },
    );
    expect(sub.status).toBe(202);
  });

  it("answers unknown routes with 404 NOT_FOUND in the envelope", async () => {
    await expectError(await h.call("/api/generate/nothing"), 404, "NOT_FOUND");
    await expectError(await h.call("/api/generate/models", { method: "DELETE" }), 404, "NOT_FOUND");
  });
});

describe("models", () => {
  it("lists image, video, audio and text models with only a model's fields (docs/service.md)", async () => {
    const r = await h.call("/api/generate/models");
    expect(r.status).toBe(200);
    const list = ModelListSchema.parse(await r.json());
    const kinds = (k: string) => list.models.filter((m) => m.kind === k);
    expect(kinds("image").length).toBeGreaterThanOrEqual(3);
    expect(kinds("video")).toHaveLength(2);
    expect(kinds("text")).toHaveLength(2);
    expect(kinds("audio").map((m) => m.id)).toContain("service-voice");
    expect(kinds("audio")).toHaveLength(2);
    for (const m of kinds("video")) {
      expect(m.available).toBeUndefined();
      for (const c of ["inputs", "aspectRatios", "durations", "resolutions", "audio"])
        expect(m.capabilities).toHaveProperty(c);
    }
    for (const m of kinds("image")) expect(typeof m.baseGems).toBe("number");
    expect(list.models.some((m) => m.kind === "image" && m.available === false)).toBe(true);
  });
});

describe("request bodies", () => {
  it("refuses non-JSON with 400 and a missing or malformed Idempotency-Key with 422", async () => {
    const bad = await h.call("/api/generate/image", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
      idem: "k1",
    });
    await expectError(bad, 400, "INVALID_REQUEST");
    const noKey = await h.call("/api/generate/image", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "sandbox-image-fast", prompt: "x" }),
    });
    expect(await expectError(noKey, 422, "INVALID_REQUEST")).toMatch(/Idempotency-Key/);
    const badKey = await h.post(
      "/api/generate/image",
      { model: "sandbox-image-fast", prompt: "x" },
      { idem: "has space" },
    );
    expect(await expectError(badKey, 422, "INVALID_REQUEST")).toMatch(/Idempotency-Key/);
  });

  it("refuses unknown top-level fields and forbidden parameter names, naming them", async () => {
    const extra = await h.post("/api/generate/image", {
      model: "sandbox-image-fast",
      prompt: "x",
      provider: "p",
    });
    expect(await expectError(extra, 422, "INVALID_REQUEST")).toMatch(/provider/);
    const inner = await h.post("/api/generate/image", {
      model: "sandbox-image-fast",
      prompt: "x",
      parameters: { sourceTool: "y" },
    });
    expect(await expectError(inner, 422, "INVALID_REQUEST")).toMatch(/parameters\.sourceTool/);
  });

  it("answers 413 past the media body limit", async () => {
    const r = await h.post("/api/generate/image", {
      model: "sandbox-image-fast",
      prompt: "x".repeat(300_000),
    });
    expect(r.status).toBe(413);
    ErrorEnvelopeSchema.parse(await r.json());
  });
});

describe("odd JSON bodies", () => {
  it.each(["null", "[]", '"text"', "42"])(
    "a body of %s is 422 on every JSON submission route",
    async (raw) => {
      for (const path of ["image", "video", "audio", "text/v1/chat/completions", "extract/video"]) {
        const r = await h.call(`/api/generate/${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: raw,
          idem: `odd-${path.length}-${raw.length}`,
        });
        expect([path, r.status]).toEqual([path, 422]);
        ErrorEnvelopeSchema.parse(await r.json());
      }
    },
  );
});
