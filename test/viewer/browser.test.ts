/**
 * The viewer in a real browser (Debian's Chromium), inside a host page built on the ext-apps
 * SDK's AppBridge, over the built server and the sandbox on loopback. Screenshots of each state
 * go to .tmp/viewer/ for a person to look at.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, runnableOrSkipped } from "../helpers/chromium.js";
import { ROOT } from "../helpers/cli.js";
import { type Browser, type HostWindow, openBrowser } from "./browser.js";
import { probe } from "./probes-api.js";
import { type Stack, startStack } from "./stack.js";

const SHOTS = join(ROOT, ".tmp", "viewer");
const available = runnableOrSkipped(chromiumMissing(), "test/viewer/browser.test.ts");

type Output = { index: number; status: string; asset: { url: string; mimeType: string } | null };
type Gen = { idempotencyKey: string; task: { id: string; status: string; outputs: Output[] } };

describe.skipIf(!available)("the viewer in Chromium", () => {
  let s: Stack;
  let b: Browser;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // At 5x a slow image is queued 4 s, then processing 8 s: the view's polls (about 2, 6, 14 s)
    // see each state.
    s = await startStack({ timeScale: 5 });
    b = await openBrowser(s.client);
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await s?.close();
  });

  const outputBytes = async (taskId: string, index: number) => {
    const c = (await s.client.readResource({ uri: `generation://tasks/${taskId}/outputs/${index}` }))
      .contents[0] as { blob: string };
    return Buffer.from(c.blob, "base64");
  };

  it("shows both images of a two-output task, loaded from the sandbox's signed URLs", async () => {
    const bodies = new Map<string, Buffer>();
    const onResponse = async (r: import("playwright-core").Response) => {
      if (r.url().startsWith(s.baseUrl)) bodies.set(r.url().split("?")[0] ?? "", await r.body());
    };
    b.page.on("response", onResponse);
    const { frame, result } = await b.show("generate_image", {
      model: "sandbox-image-fast",
      prompt: "a red fox in snow",
      parameters: { outputCount: 2 },
      wait: 30,
    });
    const gen = result.structuredContent as Gen;
    expect(gen.task.status).toBe("succeeded");
    await expect.poll(async () => (await probe(frame, "images")).filter((i) => i.loaded).length).toBe(2);
    const imgs = await probe(frame, "images");
    expect(imgs.map((i) => i.source)).toEqual(["url", "url"]);
    expect(imgs[0]?.alt).toMatch(/^Image 1 of 2: a red fox in snow/);
    for (const [i, img] of imgs.entries()) {
      const expected = await outputBytes(gen.task.id, i);
      // The bytes the frame loaded are the sandbox's output, and decode to its PNG's dimensions.
      expect(bodies.get(img.src.split("?")[0] ?? "")?.equals(expected)).toBe(true);
      expect([img.width, img.height]).toEqual([expected.readUInt32BE(16), expected.readUInt32BE(20)]);
    }
    await expect(frame.locator("footer").textContent()).resolves.toContain(gen.idempotencyKey);
    b.page.off("response", onResponse);
    await b.page.screenshot({ path: join(SHOTS, "images.png") });
  });

  it("reads the bytes through the host where the host allows no media origin, pixel for pixel", async () => {
    const { frame, result } = await b.show(
      "generate_image",
      { model: "sandbox-image-fast", prompt: "a blue heron", parameters: { outputCount: 2 }, wait: 30 },
      { csp: {} },
    );
    const gen = result.structuredContent as Gen;
    await expect
      .poll(
        async () => (await probe(frame, "images")).filter((i) => i.loaded && i.source === "resource").length,
      )
      .toBe(2);
    for (let i = 0; i < 2; i++) {
      const expected = (await outputBytes(gen.task.id, i)).toString("base64");
      // blob: images are the frame's own origin, so their pixels can be read and compared.
      const same = await probe(frame, "samePixels", i, expected);
      expect(same, `image ${i}`).toBe(true);
    }
    expect(b.requests.filter((r) => r.method === "resources/read")).toHaveLength(2);
    await b.page.screenshot({ path: join(SHOTS, "images-through-host.png") });
  });

  it("where a host allows no media source at all, says so in words and hides the empty image", async () => {
    // The MCP Inspector's rule (media from the declared origins only) with no origin declared.
    const { frame } = await b.show(
      "generate_image",
      { model: "sandbox-image-fast", prompt: "a heron nobody may see", wait: 30 },
      { csp: {}, exactOrigins: true },
    );
    const note = frame.locator(".output .note");
    await expect.poll(() => note.textContent(), { timeout: 15_000 }).toMatch(/^Not shown here: /);
    await expect(note.textContent()).resolves.toBe(
      "Not shown here: this host's content policy lets the view show no media from the service. Save or Download still work.",
    );
    await expect(frame.locator(".output .thumb").isHidden()).resolves.toBe(true);
    // The URL, the bytes through the host, then a freshly signed URL: all tried before giving up.
    const asked = b.requests.map((r) => r.params.name ?? r.method);
    expect(asked).toEqual(["resources/read", "viewer_read_task"]);
    await expect(frame.getByRole("button", { name: "Save", exact: true }).isVisible()).resolves.toBe(true);
    await b.page.screenshot({ path: join(SHOTS, "no-media-allowed.png") });
  });

  it("where a host allows the URL's origin but not blob:, shows the image from it", async () => {
    const { frame } = await b.show(
      "generate_image",
      { model: "sandbox-image-fast", prompt: "a heron in plain sight", wait: 30 },
      { exactOrigins: true },
    );
    await expect.poll(async () => (await probe(frame, "images"))[0]?.loaded, { timeout: 15_000 }).toBe(true);
    await expect(frame.locator("img").getAttribute("data-source")).resolves.toBe("url");
  });

  it("reads an output in chunks through the app-only tool where a host refuses the whole resource", async () => {
    const { frame, result } = await b.show(
      "generate_audio",
      // 120 s of music: a WAV of several 512 KiB chunks.
      {
        model: "sandbox-music",
        operation: "music",
        prompt: "a tune read in chunks",
        parameters: { musicMode: "advanced", duration: "120", style: "calm piano", instrumental: "on" },
        wait: 30,
      },
      { csp: {}, refuseResourceRead: true },
    );
    const gen = result.structuredContent as Gen;
    await expect.poll(() => probe(frame, "audioDuration")).toBeGreaterThan(0);
    const wav = await outputBytes(gen.task.id, 0);
    const calls = b.requests.filter((r) => r.method === "tools/call").map((r) => r.params.name);
    expect(calls).toEqual(Array(Math.ceil(wav.byteLength / (512 * 1024))).fill("viewer_read_output"));
    expect(calls.length).toBeGreaterThan(1);
    await expect(frame.locator("audio").getAttribute("data-source")).resolves.toBe("chunks");
    // The chunks add up to the output's bytes: the player's length matches the WAV's own.
    const seconds = (wav.byteLength - 44) / wav.readUInt32LE(28);
    expect(Math.abs((await probe(frame, "audioDuration")) - seconds)).toBeLessThan(0.05);
  });

  it("plays the audio of a speech task, with its duration", async () => {
    const { frame } = await b.show("generate_audio", {
      model: "service-voice",
      operation: "speech",
      prompt: "The viewer plays this sentence.",
      parameters: { voiceProfileId: "voice_en_01" },
      wait: 30,
    });
    await expect.poll(() => probe(frame, "audioDuration")).toBeGreaterThan(0);
    await expect(frame.locator(".duration").textContent()).resolves.toMatch(/length \d+:\d\d/);
    await frame.locator("audio").click({ position: { x: 20, y: 16 } });
    await expect.poll(() => probe(frame, "audioTime"), { timeout: 10_000 }).toBeGreaterThan(0.1);
    await b.page.screenshot({ path: join(SHOTS, "audio.png") });
  });

  it("shows a video with a poster frame", async () => {
    const { frame } = await b.show("generate_video", {
      model: "sandbox-video-lite",
      prompt: "waves on a shore",
      parameters: { mode: "text-to-video" },
      wait: 30,
    });
    await expect.poll(() => probe(frame, "video"), { timeout: 15_000 }).toMatchObject({ frame: true });
    const video = await probe(frame, "video");
    expect(video.duration).toBeGreaterThan(0);
    expect(video.width).toBeGreaterThan(0);
    await b.page.screenshot({ path: join(SHOTS, "video.png") });
  });

  it("follows a slow task from processing to succeeded with no call from the model", async () => {
    const { frame, result } = await b.show("generate_image", {
      model: "sandbox-image-fast",
      prompt: "[sandbox:slow] a lighthouse at dusk",
      wait: 0,
    });
    expect((result.structuredContent as Gen).task.status).not.toBe("succeeded");
    await frame.waitForSelector('.status[data-status="queued"]');
    await expect(frame.locator(".status").textContent()).resolves.toMatch(/elapsed · \d+ Gems quoted/);
    await frame.waitForSelector('.status[data-status="processing"]', { timeout: 15_000 });
    await expect(frame.locator(".status").textContent()).resolves.toMatch(
      /processing · [1-9]\d* seconds? elapsed/,
    );
    await b.page.screenshot({ path: join(SHOTS, "slow-running.png") });
    await frame.waitForSelector('.status[data-status="succeeded"]', { timeout: 40_000 });
    await expect.poll(async () => (await probe(frame, "images"))[0]?.loaded).toBe(true);
    // Only the view's own app-only refreshes reached the server (and an image load at most).
    const calls = b.requests.filter((r) => r.method === "tools/call").map((r) => r.params.name);
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(calls)).toEqual(new Set(["viewer_read_task"]));
    await b.page.screenshot({ path: join(SHOTS, "slow-succeeded.png") });
  }, 60_000);

  it("says which outputs failed and why, for a failed and a partial task", async () => {
    const failed = await b.show("generate_image", {
      model: "sandbox-image-fast",
      prompt: "[sandbox:fail] a storm",
      wait: 30,
    });
    await failed.frame.waitForSelector('.status[data-status="failed"]');
    await expect
      .poll(() => failed.frame.locator("p.status + p.error").textContent())
      .toContain("GENERATION_FAILED");
    // Said once: the reason under the status line, the card only which output, numbered from 1.
    await expect
      .poll(() => failed.frame.locator(".output.failed .error").first().textContent())
      .toBe("Output 1 failed.");
    expect(await failed.frame.locator("text=GENERATION_FAILED").count()).toBe(1);
    await expect
      .poll(() => failed.frame.locator("p.status").textContent())
      .not.toContain("GENERATION_FAILED");
    await b.page.screenshot({ path: join(SHOTS, "failed.png") });

    const partial = await b.show("generate_image", {
      model: "sandbox-image-fast",
      prompt: "[sandbox:partial] two boats",
      parameters: { outputCount: 2 },
      wait: 30,
    });
    await partial.frame.waitForSelector('.status[data-status="partial"]');
    await expect
      .poll(() => partial.frame.locator("p.status + p.error").textContent())
      .toContain("Only 1 of 2 outputs succeeded");
    await expect
      .poll(() => partial.frame.locator(".output.failed .error").textContent())
      .toMatch(/^Output 2 failed\./);
    // An empty reason stays a line, not a box as tall as its neighbour's image.
    const box = await partial.frame.locator(".output.failed").boundingBox();
    expect(box?.height ?? 999).toBeLessThan(60);
    await expect.poll(async () => (await probe(partial.frame, "images"))[0]?.loaded).toBe(true);
    await b.page.screenshot({ path: join(SHOTS, "partial.png") });
  });

  it("says where the work went when the host cancels the call", async () => {
    const { frame } = await b.show(
      "list_models",
      { kind: "image" },
      { cancelled: "the host's time limit ran out" },
    );
    await expect(frame.locator(".error").textContent()).resolves.toMatch(
      /ended without a result \(the host's time limit ran out\).*list_requests/,
    );
  });

  it("follows the host's theme, opens an image full size by keyboard, saves and downloads", async () => {
    const { frame, result } = await b.show(
      "generate_image",
      { model: "sandbox-image-fast", prompt: "a green field", wait: 30 },
      { theme: "dark" },
    );
    await expect.poll(() => probe(frame, "theme")).toBe("dark");
    await b.page.evaluate(() => (globalThis as unknown as HostWindow).setTheme("light"));
    await expect.poll(() => probe(frame, "theme")).toBe("light");
    await frame.locator(".thumb").focus();
    await b.page.keyboard.press("Enter");
    await frame.waitForSelector("dialog.full[open] img");
    await b.page.screenshot({ path: join(SHOTS, "full-size.png") });
    await b.page.keyboard.press("Escape");
    await frame.waitForSelector("dialog.full", { state: "detached" });
    await frame.getByRole("button", { name: "Save" }).click();
    await expect
      .poll(() => frame.locator(".action-status").textContent(), { timeout: 10_000 })
      .toMatch(/^Saved: \/.*-0\.png$/);
    await frame.getByRole("button", { name: "Download" }).click();
    const downloads = () =>
      b.page.evaluate(
        () => (globalThis as unknown as HostWindow).hostLog.downloads as Array<Record<string, unknown>>,
      );
    // Under the MCP Inspector's rule (http(s) links only, embedded bytes saved as a file): the bytes.
    await expect.poll(async () => (await downloads()).length).toBe(1);
    const [got] = await downloads();
    const taskId = (result.structuredContent as Gen).task.id;
    expect(got).toEqual({
      file: `${taskId}-0.png`,
      bytes: (await outputBytes(taskId, 0)).byteLength,
      mimeType: "image/png",
    });
    await expect
      .poll(() => frame.locator(".action-status").textContent())
      .toBe(`Download of ${taskId}-0.png started.`);
  });
});
