import { readFile } from "node:fs/promises";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { drive, fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, type HarnessOptions, harness, structured, textOf } from "./harness.js";

type Task = {
  id: string;
  status: string;
  outputs: { index: number; status: string; asset: { mimeType: string; url: string } | null }[];
};
type Submitted = { idempotencyKey: string; created: boolean; task: Task; saved?: string[] };

const IMAGE = "POST /api/generate/image";
const VIDEO = "POST /api/generate/video";
const video = {
  model: "sandbox-video-lite",
  prompt: "waves",
  parameters: { mode: "text-to-video", duration: 5, ratio: "16:9" },
};

let h: Harness;
const open = async (o?: HarnessOptions) => {
  h = await harness(o);
  return h;
};
fakeTimeEach();
afterEach(() => h?.close());

const links = (r: CallToolResult) =>
  r.content.filter((c) => c.type === "resource_link") as { uri: string; mimeType?: string }[];

async function until(cond: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("generation tools", () => {
  it("generate_image returns the finished task with identity, Gems, links and a small inline preview", async () => {
    await open();
    const progress: number[] = [];
    const r = await h.call(
      "generate_image",
      { model: "sandbox-image-fast", prompt: "a red fox", parameters: { outputCount: 2 }, wait: 20 },
      { onprogress: (p) => progress.push(p.progress) },
    );
    const s = structured<Submitted>(r);
    expect(s.created).toBe(true);
    expect(s.task.status).toBe("succeeded");
    expect(s.idempotencyKey).toMatch(/^[a-zA-Z0-9_.:-]{1,128}$/);
    const text = textOf(r);
    expect(text).toContain(`Task ${s.task.id} has succeeded`);
    expect(text).toContain(s.idempotencyKey);
    expect(text).toMatch(/Gems: quoted \d+, charged \d+, released \d+/);
    for (const o of s.task.outputs) expect(text).toContain(o.asset?.url);
    expect(links(r).map((l) => l.uri)).toEqual(
      [0, 1].map((i) => `generation://tasks/${s.task.id}/outputs/${i}`),
    );
    expect(links(r)[0]?.mimeType).toBe("image/png");
    const images = r.content.filter((c) => c.type === "image");
    expect(images.length).toBe(2);
    expect(JSON.stringify(r).length).toBeLessThan(1_000_000);
    expect(progress.length).toBeGreaterThan(0);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
    expect(new Set(progress).size).toBe(progress.length);
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(1);
    const [record] = await h.ledger.list(h.engine.keyHash);
    expect(record).toMatchObject({
      idempotencyKey: s.idempotencyKey,
      state: "succeeded",
      delivered: true,
      taskId: s.task.id,
    });
  });

  it("refuses bad arguments locally with INVALID_ARGUMENT naming the field and the limit", async () => {
    await open();
    // A known model: an unknown one is named first, before any other error (argument-errors.test.ts).
    const M = "sandbox-image-fast";
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ model: M, prompt: "x".repeat(30_001) }, /^INVALID_ARGUMENT: prompt: .*30,000 characters/],
      [
        { model: M, prompt: "x", colour: "red" },
        /^INVALID_ARGUMENT: colour: unknown argument; generate_image accepts only model, prompt/,
      ],
      [{ model: M, prompt: "x", wait: 601 }, /^INVALID_ARGUMENT: wait: .*600/],
      [{ model: "", prompt: "x" }, /^INVALID_ARGUMENT: model: .*1/],
      [
        { model: M, prompt: "x", parameters: { outputCount: 9 } },
        /^INVALID_ARGUMENT: parameters\.outputCount: .*4/,
      ],
      [{ model: M, prompt: "x", maxGems: -1 }, /^INVALID_ARGUMENT: maxGems: .*0/],
      [{ model: M, prompt: "x", idempotencyKey: "no spaces" }, /^INVALID_ARGUMENT: idempotencyKey: .*128/],
      [
        { model: M, prompt: "x", referenceAssetIds: Array(11).fill("a") },
        /^INVALID_ARGUMENT: referenceAssetIds: .*10/,
      ],
      [{ prompt: "x" }, /^INVALID_ARGUMENT: model: /],
    ];
    for (const [args, pattern] of cases) {
      const r = await h.call("generate_image", args);
      expect(r.isError, JSON.stringify(args).slice(0, 80)).toBe(true);
      expect(textOf(r)).toMatch(pattern);
      expect(textOf(r)).toMatch(/Next: /);
    }
    const audio = await h.call("generate_audio", {
      model: "service-voice",
      prompt: "hi",
      operation: "speech",
      parameters: { voiceProfileId: "v1", speed: 3 },
    });
    expect(textOf(audio)).toMatch(/^INVALID_ARGUMENT: parameters\.speed: .*2/);
    // Nothing sent: only the (free) model catalog was read, once, to judge the model first.
    expect(h.sandbox.stats.requests()).toBe(h.sandbox.stats.requests("GET /api/generate/models"));
    expect(h.sandbox.stats.requests("GET /api/generate/models")).toBeLessThanOrEqual(1);
  });

  it("a wait that runs out returns the task ID and says to poll; poll_task then reports the terminal task", async () => {
    await open({ timeScale: 1 });
    const r = await h.call("generate_video", { ...video, wait: 1 });
    const s = structured<Submitted>(r);
    expect(["queued", "processing"]).toContain(s.task.status);
    expect(textOf(r)).toContain(s.task.id);
    expect(textOf(r)).toMatch(/call poll_task with \{"taskId": "[^"]+", "wait": \d+\}/);
    expect(r.content.some((c) => c.type === "image" || c.type === "audio")).toBe(false);
    h.sandbox.advance(10 * 60_000);
    const p = await h.call("poll_task", { taskId: s.task.id });
    const polled = structured<{ task: Task; terminal: boolean }>(p);
    expect(polled.terminal).toBe(true);
    expect(polled.task.status).toBe("succeeded");
    expect(links(p)[0]).toMatchObject({
      uri: `generation://tasks/${s.task.id}/outputs/0`,
      mimeType: "video/mp4",
    });
    expect(p.content.some((c) => c.type !== "text" && c.type !== "resource_link")).toBe(false);
    expect(h.sandbox.stats.dispatches(VIDEO)).toBe(1);
  });

  it("a call cancelled mid-wait stays undelivered, and an identical call replays the same identity", async () => {
    await open({ timeScale: 1 });
    const abort = new AbortController();
    const first = h
      .call("generate_video", { ...video, wait: 30 }, { signal: abort.signal })
      .catch((e: unknown) => e);
    await until(() => h.sandbox.stats.dispatches(VIDEO) === 1);
    abort.abort();
    expect(await first).toBeInstanceOf(Error);
    await drive(new Promise((r) => setTimeout(r, 100)));
    const [record] = await h.ledger.list(h.engine.keyHash);
    expect(record).toMatchObject({ tool: "generate_video", delivered: false });
    const again = structured<Submitted>(await h.call("generate_video", { ...video, wait: 0 }));
    expect(again.idempotencyKey).toBe(record?.idempotencyKey);
    expect(again.task.id).toBe(record?.taskId);
    expect(again.created).toBe(false);
    expect(h.sandbox.stats.dispatches(VIDEO)).toBe(1);
    const [after] = await h.ledger.list(h.engine.keyHash);
    expect(after?.delivered).toBe(true);
  });

  it("an uncertain outcome is replayed under the same identity, visibly, and dispatched once", async () => {
    await open();
    h.sandbox.faults.inject(IMAGE, { kind: "reset-after-commit" });
    h.sandbox.faults.inject("POST /api/generate/text/v1/chat/completions", { kind: "cut-stream" });
    const progress: string[] = [];
    const onprogress = (p: { message?: string | undefined }) => {
      progress.push(String(p.message));
    };
    const image = structured<Submitted>(
      await h.call("generate_image", { model: "sandbox-image-fast", prompt: "fox", wait: 0 }, { onprogress }),
    );
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(1);
    expect(h.sandbox.stats.requests(IMAGE)).toBe(2);
    expect(progress[0]).toMatch(
      /^Outcome unclear \(NETWORK_ERROR\); replaying under the same identity, attempt 2/,
    );
    const chat = await h.call(
      "chat",
      { model: "sandbox-chat-small", messages: [{ role: "user", content: "hi" }] },
      { onprogress },
    );
    expect(structured<{ content: string }>(chat).content).toMatch(/hi/);
    expect(progress.some((m) => /INCOMPLETE_STREAM/.test(m))).toBe(true);
    const records = await h.ledger.list(h.engine.keyHash);
    expect(records.map((r) => r.attempts).sort()).toEqual([2, 2]);
    expect(records.find((r) => r.tool === "generate_image")?.idempotencyKey).toBe(image.idempotencyKey);
  });

  it("an explicit idempotencyKey reused for a different request is refused and nothing is sent", async () => {
    await open();
    const ok = structured<Submitted>(
      await h.call("generate_image", {
        model: "sandbox-image-fast",
        prompt: "one",
        idempotencyKey: "key-1",
        wait: 0,
      }),
    );
    expect(ok.idempotencyKey).toBe("key-1");
    const r = await h.call("generate_image", {
      model: "sandbox-image-fast",
      prompt: "two",
      idempotencyKey: "key-1",
      wait: 0,
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^IDEMPOTENCY_CONFLICT: .*Next: /);
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(1);
  });

  it("service refusals start with the code, say what to do, and carry status and code in _meta", async () => {
    await open();
    // An asset ID no answer named: only the service knows it is not this key's.
    const r = await h.call("generate_image", {
      model: "sandbox-image-edit",
      prompt: "x",
      parameters: { sourceImage: "ast_not_owned" },
      wait: 0,
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^INVALID_REFERENCE: .*sourceImage.*\(HTTP 422\) Next: /);
    expect(r._meta).toMatchObject({ status: 422, code: "INVALID_REFERENCE" });
  });

  it("a partial task says which outputs succeeded and which failed", async () => {
    await open();
    const r = await h.call("generate_image", {
      model: "sandbox-image-fast",
      prompt: "two foxes [sandbox:partial]",
      parameters: { outputCount: 2 },
      wait: 20,
    });
    const s = structured<Submitted>(r);
    expect(s.task.status).toBe("partial");
    expect(textOf(r)).toMatch(/Succeeded: #\d.*Failed: #\d/);
  });

  it("saves finished outputs into the output directory under safe names", async () => {
    await open();
    const s = structured<Submitted>(
      await h.call("generate_image", { model: "sandbox-image-fast", prompt: "a fox", wait: 20, save: true }),
    );
    expect(s.saved).toEqual([`${h.engine.config.outputDir}/${s.task.id}-0.png`]);
    const bytes = await readFile(s.saved?.[0] as string);
    expect([...bytes.subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    const again = structured<{ saved: string[] }>(await h.call("save_outputs", { taskId: s.task.id }));
    expect(again.saved).toEqual([`${h.engine.config.outputDir}/${s.task.id}-0-1.png`]);
  });

  it("generate_audio speaks with a voice from list_voices", async () => {
    await open();
    const voices = structured<{ voices: { id: string }[] }>(
      await h.call("list_voices", { scope: "explore", page: 1 }),
    );
    const voice = voices.voices[0]?.id as string;
    const r = await h.call("generate_audio", {
      model: "service-voice",
      operation: "speech",
      prompt: "Hello there",
      parameters: { voiceProfileId: voice },
      wait: 20,
    });
    const s = structured<Submitted>(r);
    expect(s.task.status).toBe("succeeded");
    expect(links(r)[0]?.mimeType).toMatch(/^audio\//);
    expect(r.content.some((c) => c.type === "audio")).toBe(false);
  });
});
