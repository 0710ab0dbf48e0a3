import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubmissionSchema } from "../../src/client/schemas.js";
import { createSandbox, SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { freshIdem, type Harness, startSandbox } from "./sandbox-helpers.js";

let h: Harness;
beforeAll(async () => {
  h = await startSandbox();
});
afterAll(() => h.close());

const IMAGE = "POST /api/generate/image";
const CHAT = "POST /api/generate/text/v1/chat/completions";
const img = (p: string) => ({ model: "sandbox-image-fast", prompt: p });
const chat = (content: string) => ({
  model: "sandbox-chat-small",
  messages: [{ role: "user", content: `${content} with enough words to make several chunks` }],
  stream: true,
});

describe("fault injection", () => {
  it("a status fault answers the envelope with Retry-After, creates nothing, and runs out after `times`", async () => {
    h.sb.faults.inject(IMAGE, { status: 503, code: "TEMPORARILY_UNAVAILABLE", retryAfter: 2 }, 2);
    const before = h.sb.stats.dispatches(IMAGE);
    const idem = freshIdem();
    for (let i = 0; i < 2; i++) {
      const r = await h.post("/api/generate/image", img("f"), { idem });
      expect([r.status, r.headers.get("retry-after")]).toEqual([503, "2"]);
      expect(await r.json()).toEqual({
        error: { message: expect.any(String), code: "TEMPORARILY_UNAVAILABLE" },
      });
    }
    expect(h.sb.stats.dispatches(IMAGE)).toBe(before);
    const ok = await h.post("/api/generate/image", img("f"), { idem });
    expect(ok.status).toBe(202);
    expect(h.sb.stats.dispatches(IMAGE)).toBe(before + 1);
  });

  it("a committed 409 REQUEST_UNCERTAIN records the work; the replay returns it without a second dispatch", async () => {
    h.sb.faults.inject(IMAGE, { status: 409, code: "REQUEST_UNCERTAIN", commit: true });
    const before = h.sb.stats.dispatches(IMAGE);
    const idem = freshIdem();
    expect((await h.post("/api/generate/image", img("u"), { idem })).status).toBe(409);
    const replay = SubmissionSchema.parse(
      await (await h.post("/api/generate/image", img("u"), { idem })).json(),
    );
    expect(replay.created).toBe(false);
    expect(h.sb.stats.dispatches(IMAGE)).toBe(before + 1);
  });

  it("reset-after-commit drops the HTTP connection after recording the work", async () => {
    h.sb.faults.inject(IMAGE, { kind: "reset-after-commit" });
    const before = h.sb.stats.dispatches(IMAGE);
    const idem = freshIdem();
    await expect(h.post("/api/generate/image", img("r"), { idem })).rejects.toThrow(TypeError);
    expect(h.sb.stats.dispatches(IMAGE)).toBe(before + 1);
    const r = await h.post("/api/generate/image", img("r"), { idem });
    expect([r.status, SubmissionSchema.parse(await r.json()).created]).toEqual([200, false]);
    expect(h.sb.stats.dispatches(IMAGE)).toBe(before + 1);
  });

  it("in fetch mode, reset is a TypeError and hang ends only when the caller aborts", async () => {
    const sb = createSandbox({ seed: "f" });
    const init = (idem: string, signal?: AbortSignal): RequestInit => ({
      method: "POST",
      headers: {
        authorization: `Bearer ${SANDBOX_API_KEY}`,
        "content-type": "application/json",
        "idempotency-key": idem,
      },
      body: JSON.stringify(img("in-process")),
      ...(signal ? { signal } : {}),
    });
    sb.faults.inject(IMAGE, { kind: "reset-after-commit" });
    await expect(sb.handler("http://sandbox.test/api/generate/image", init("a"))).rejects.toThrow(TypeError);
    sb.faults.inject(IMAGE, { kind: "hang" });
    await expect(
      sb.handler("http://sandbox.test/api/generate/image", init("b", AbortSignal.timeout(100))),
    ).rejects.toThrow();
    expect(sb.stats.dispatches(IMAGE)).toBe(2);
    const replay = await sb.handler("http://sandbox.test/api/generate/image", init("b"));
    expect(replay.status).toBe(200);
    sb.faults.inject(IMAGE, { kind: "hang", commit: false });
    const pending = sb.handler("http://sandbox.test/api/generate/image", init("c"));
    await sb.close();
    await expect(pending).rejects.toThrow();
    expect(sb.stats.dispatches(IMAGE)).toBe(2);
  });

  it("hang over HTTP: the client times out, the work is recorded", async () => {
    h.sb.faults.inject(IMAGE, { kind: "hang" });
    const before = h.sb.stats.dispatches(IMAGE);
    const idem = freshIdem();
    const r = h.call("/api/generate/image", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(img("h")),
      idem,
      signal: AbortSignal.timeout(150),
    });
    await expect(r).rejects.toThrow();
    expect(h.sb.stats.dispatches(IMAGE)).toBe(before + 1);
  });

  it("cut-stream ends SSE before [DONE]; error-frame sends REQUEST_UNCERTAIN; replays deliver the saved answer", async () => {
    for (const kind of ["cut-stream", "error-frame"] as const) {
      h.sb.faults.inject(CHAT, { kind });
      const idem = freshIdem();
      const broken = await (
        await h.post("/api/generate/text/v1/chat/completions", chat(kind), { idem })
      ).text();
      expect(broken).not.toContain("[DONE]");
      expect(broken.includes("REQUEST_UNCERTAIN")).toBe(kind === "error-frame");
      const replay = await (
        await h.post("/api/generate/text/v1/chat/completions", chat(kind), { idem })
      ).text();
      expect(replay).toContain("data: [DONE]");
      expect(replay).toContain("Sandbox answer to:");
    }
  });

  it("cut-stream on a JSON answer breaks the body midway; clear() removes pending faults", async () => {
    h.sb.faults.inject("GET /api/generate/models", { kind: "cut-stream" });
    const r = await h.call("/api/generate/models");
    await expect(r.json()).rejects.toThrow();
    h.sb.faults.inject("GET /api/generate/models", { status: 500 });
    h.sb.faults.clear();
    expect((await h.call("/api/generate/models")).status).toBe(200);
    expect(h.sb.stats.requests("GET /api/generate/models")).toBeGreaterThanOrEqual(2);
  });
});

describe("prices", () => {
  it("an image is quoted from the catalog's own factors: baseGems × outputCount × resolutionMultipliers", async () => {
    const quote = async (parameters: Record<string, unknown>) => {
      const r = await h.post(
        "/api/generate/image",
        { model: "sandbox-image-pro", prompt: "q", parameters },
        { idem: freshIdem() },
      );
      return SubmissionSchema.parse(await r.json()).task.quotedGems;
    };
    expect(await quote({ resolution: "1K" })).toBe(8);
    expect(await quote({ resolution: "2K", outputCount: 3 })).toBe(48);
    expect(await quote({ resolution: "4K", outputCount: 4 })).toBe(128);
  });

  it("a reprice fault quotes a submission above its catalog price, so maxGems refuses it with nothing created", async () => {
    h.sb.faults.inject(IMAGE, { kind: "reprice", factor: 2.5 });
    const before = h.sb.stats.dispatches(IMAGE);
    const body = { model: "sandbox-image-pro", prompt: "p", parameters: { resolution: "2K" }, maxGems: 16 };
    const r = await h.post("/api/generate/image", body, { idem: freshIdem() });
    expect(r.status).toBe(409);
    expect(await r.json()).toEqual({
      error: {
        code: "PRICE_CHANGED",
        message: "The quote is 40 Gems, above maxGems 16. Approve a higher maxGems to proceed.",
      },
    });
    expect(h.sb.stats.dispatches(IMAGE)).toBe(before);
    // The fault was used up: the same request at its catalog price goes through.
    expect((await h.post("/api/generate/image", body, { idem: freshIdem() })).status).toBe(202);
  });

  it("a model of the wrong kind is named with the right article", async () => {
    const r = await h.post(
      "/api/generate/text/v1/chat/completions",
      { model: "sandbox-image-pro", messages: [{ role: "user", content: "hi" }] },
      { idem: freshIdem() },
    );
    expect(r.status).toBe(422);
    expect(((await r.json()) as { error: { message: string } }).error.message).toBe(
      "model: sandbox-image-pro is an image model, not a text one.",
    );
  });
});

describe("runSandboxServer", () => {
  it("prints its base URL and the sandbox key, and serves on it", async () => {
    const { runSandboxServer } = await import("../../src/sandbox/sandbox.js");
    const lines: string[] = [];
    const running = await runSandboxServer({ port: 0, host: "127.0.0.1", out: (l) => lines.push(l) });
    expect(lines.join("\n")).toContain(running.url);
    expect(lines.join("\n")).toContain(SANDBOX_API_KEY);
    const r = await fetch(`${running.url}/api/generate/models`, {
      headers: { authorization: `Bearer ${SANDBOX_API_KEY}` },
    });
    expect(r.status).toBe(200);
    await running.close();
  });
});

describe("concurrency and faults on downloads", () => {
  it("concurrent identical submissions create one task; others replay it or hear REQUEST_UNCERTAIN", async () => {
    const up = await h.call("/api/generate/assets", {
      method: "POST",
      body: (await import("../../src/sandbox/media/mp4.js")).renderVideo("ref", 3, "16:9"),
      headers: { "content-type": "video/mp4" },
    });
    const ref = ((await up.json()) as { asset: { id: string } }).asset.id;
    h.sb.advance(1_000);
    const route = "POST /api/generate/video";
    const before = h.sb.stats.dispatches(route);
    const body = {
      model: "sandbox-video-pro",
      prompt: "race",
      parameters: { mode: "text-to-video", referenceVideos: [ref] },
    };
    const idem = freshIdem();
    const answers = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const r = await h.post("/api/generate/video", body, { idem });
        return {
          status: r.status,
          body: (await r.json()) as { task?: { id: string }; error?: { code: string } },
        };
      }),
    );
    expect(h.sb.stats.dispatches(route)).toBe(before + 1);
    const ids = new Set(answers.filter((a) => a.status < 300).map((a) => a.body.task?.id));
    expect(ids.size).toBe(1);
    for (const a of answers.filter((x) => x.status >= 300)) {
      expect([a.status, a.body.error?.code]).toEqual([409, "REQUEST_UNCERTAIN"]);
    }
  });

  it("a refused request under reset-after-commit still loses its connection", async () => {
    h.sb.faults.inject(IMAGE, { kind: "reset-after-commit" });
    await expect(h.post("/api/generate/image", { model: "nope", prompt: "x" })).rejects.toThrow(TypeError);
  });

  it("signed downloads take faults too: a 503, then a body cut in half", async () => {
    const sub = SubmissionSchema.parse(await (await h.post("/api/generate/image", img("dl"))).json());
    h.sb.advance(3_000);
    const task = (await (await h.call(`/api/generate/tasks/${sub.task.id}`)).json()) as {
      task: { outputs: { asset: { url: string } }[] };
    };
    const url = task.task.outputs[0]?.asset.url ?? "";
    h.sb.faults.inject("GET /sandbox/files/{id}", { status: 503 });
    expect((await fetch(url)).status).toBe(503);
    h.sb.faults.inject("GET /sandbox/files/{id}", { kind: "cut-stream" });
    await expect(fetch(url).then((r) => r.arrayBuffer())).rejects.toThrow();
    expect((await fetch(url)).status).toBe(200);
  });
});

describe("faults over HTTP (a sandbox in its own process)", () => {
  it("POST /sandbox/faults injects a fault that echoes the request's key; a malformed one is refused", async () => {
    const bad = await h.post("/sandbox/faults", { route: IMAGE, fault: { kind: "no-such-fault" } });
    expect(bad.status).toBe(422);
    for (const factor of [0, -1, "2"]) {
      const reprice = await h.post("/sandbox/faults", { route: IMAGE, fault: { kind: "reprice", factor } });
      expect(reprice.status).toBe(422);
    }
    const repriced = await h.post("/sandbox/faults", { route: IMAGE, fault: { kind: "reprice", factor: 3 } });
    expect(repriced.status).toBe(201);
    const over = await h.post(
      "/api/generate/image",
      { ...img("three times"), maxGems: 5 },
      { idem: freshIdem() },
    );
    expect(((await over.json()) as { error: { code: string } }).error.code).toBe("PRICE_CHANGED");
    const unauthorised = await h.post(
      "/sandbox/faults",
      { route: IMAGE, fault: { status: 500 } },
      { key: "x" },
    );
    expect(unauthorised.status).toBe(401);

    const injected = await h.post("/sandbox/faults", {
      route: IMAGE,
      fault: { status: 422, code: "INVALID_REQUEST", echoKey: true },
    });
    expect(injected.status).toBe(201);
    const r = await h.post("/api/generate/image", img("echo"), { idem: freshIdem() });
    expect(r.status).toBe(422);
    const { error } = (await r.json()) as { error: { message: string } };
    expect(error.message).toContain(SANDBOX_API_KEY.slice(4).toUpperCase());
    expect(error.message).toContain(SANDBOX_API_KEY.toUpperCase());
    expect(error.message).toContain(Buffer.from(SANDBOX_API_KEY).toString("base64"));
    // Used up: the next request is served.
    expect((await h.post("/api/generate/image", img("echo"), { idem: freshIdem() })).status).toBe(202);
  });
});
