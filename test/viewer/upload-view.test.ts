/**
 * The viewer's upload form in Debian's Chromium, in the test host built on the ext-apps SDK's
 * AppBridge, over the built server on stdio and the sandbox on loopback: files chosen with the
 * browser's file chooser become an asset or a voice whose ID the host is handed for the model;
 * every refusal is shown in the view before a byte reaches the service (the sandbox counts what
 * reaches it); Download works in hosts without a download of their own. Screenshots go to
 * .tmp/viewer/upload-*.png.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Frame } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderImage } from "../../src/sandbox/media/png.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import { chromiumMissing, runnableOrSkipped } from "../helpers/chromium.js";
import { ROOT } from "../helpers/cli.js";
import { type Browser, type HostWindow, openBrowser } from "./browser.js";
import { type Stack, startStack } from "./stack.js";

const SHOTS = join(ROOT, ".tmp", "viewer");
const ASSETS = "POST /api/generate/assets";
const VOICES = "POST /api/generate/voices";
const available = runnableOrSkipped(chromiumMissing(), "test/viewer/upload-view.test.ts");

type Picked = { name: string; mimeType: string; buffer: Buffer };

describe.skipIf(!available)("the viewer's upload form in Chromium", () => {
  let s: Stack;
  let b: Browser;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startStack();
    b = await openBrowser(s.client);
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await s?.close();
  });

  const uploads = () => s.sandbox.stats.requests(ASSETS) + s.sandbox.stats.requests(VOICES);
  const log = () => b.page.evaluate(() => (globalThis as unknown as HostWindow).hostLog);

  /** Chooses `file` as a user does: the button, then the browser's file chooser. */
  async function choose(frame: Frame, file: Picked): Promise<void> {
    const [chooser] = await Promise.all([
      b.page.waitForEvent("filechooser"),
      frame.getByRole("button", { name: "Choose a file" }).click(),
    ]);
    await chooser.setFiles(file);
  }

  const status = (frame: Frame) => frame.locator(".upload-status");

  it("uploads a PNG chosen with the file chooser: the asset with its ID and a preview, handed to the model", async () => {
    const { frame } = await b.show("upload_asset", {});
    await expect(frame.getByRole("heading").textContent()).resolves.toBe(
      "Upload an image, video or audio file",
    );
    await expect(frame.locator(".limits").textContent()).resolves.toMatch(/up to 30 MiB/);
    const png = renderImage("my own fox", "16:9");
    await choose(frame, { name: "fox.png", mimeType: "image/png", buffer: png });
    await expect(status(frame).textContent()).resolves.toMatch(/^Ready: fox\.png/);
    await b.page.screenshot({ path: join(SHOTS, "upload-ready.png") });
    await frame.getByRole("button", { name: "Upload", exact: true }).click();
    const done = frame.locator(".status.uploaded");
    await done.waitFor({ timeout: 20_000 });
    const id = (await done.getAttribute("data-id")) ?? "";
    expect(id).toMatch(/^ast_/);
    await expect(done.textContent()).resolves.toBe(`Uploaded fox.png: asset ${id} · image · processing`);
    // The preview is the chosen file itself (the service gives no URL while it processes it).
    await expect
      .poll(() => frame.evaluate("document.querySelector('.upload-preview canvas')?.width ?? 0"))
      .toBe(png.readUInt32BE(16));
    await expect
      .poll(() => frame.locator(".handed").textContent())
      .toMatch(/^The assistant has the ID for its next answer/);
    const context = (await log()).context as Array<{
      content: Array<{ text: string }>;
      structuredContent: unknown;
    }>;
    expect(context).toHaveLength(1);
    expect(context[0]?.content[0]?.text).toMatch(
      new RegExp(
        `^The user uploaded fox\\.png in the media viewer: asset ${id} \\(image, processing\\)\\. Use "${id}" as sourceImage`,
      ),
    );
    expect(context[0]?.structuredContent).toMatchObject({ asset: { id, kind: "image" } });
    expect(s.sandbox.stats.requests(ASSETS)).toBe(1);
    await b.page.screenshot({ path: join(SHOTS, "upload-done.png") });
  });

  it("makes a WAV recording a private voice only once the rights box is ticked, handing the ID as a message where that is all the host takes", async () => {
    const before = uploads();
    const { frame } = await b.show(
      "upload_voice",
      {},
      { capabilities: { serverTools: {}, message: { text: {} } } },
    );
    await expect(frame.locator(".limits").textContent()).resolves.toMatch(/15 to 300 seconds, up to 50 MiB/);
    await choose(frame, { name: "me.wav", mimeType: "audio/wav", buffer: renderAudio("my voice", 20) });
    const upload = frame.getByRole("button", { name: "Upload", exact: true });
    await upload.click();
    await expect(status(frame).textContent()).resolves.toBe(
      "Not uploaded: tick the box to confirm you have the speaker's permission to clone this voice; the service requires it. Nothing was sent.",
    );
    expect(uploads()).toBe(before);
    await b.page.screenshot({ path: join(SHOTS, "upload-voice-unticked.png") });
    await frame.getByLabel(/I have the speaker's permission/).check();
    await upload.click();
    const done = frame.locator(".status.uploaded");
    await done.waitFor({ timeout: 20_000 });
    const id = (await done.getAttribute("data-id")) ?? "";
    expect(id).toMatch(/^voice_own_/);
    await expect
      .poll(() => frame.locator(".handed").textContent())
      .toBe("The ID went to the conversation as your message.");
    const messages = (await log()).messages as Array<{ role: string; content: Array<{ text: string }> }>;
    expect(messages.at(-1)?.role).toBe("user");
    expect(messages.at(-1)?.content[0]?.text).toMatch(
      new RegExp(
        `^I uploaded me\\.wav in the media viewer as a private voice: ${id} .*voiceProfileId "${id}"`,
      ),
    );
    expect(s.sandbox.stats.requests(VOICES)).toBe(1);
  });

  it("refuses in the view, before a byte reaches the service: a non-media file, an oversized one, a chunk before chunk 0 or past the total", async () => {
    const before = uploads();
    const { frame } = await b.show("upload_asset", {});
    const upload = frame.getByRole("button", { name: "Upload", exact: true });

    await choose(frame, { name: "big.mp4", mimeType: "video/mp4", buffer: Buffer.alloc(31_457_281, 1) });
    await expect(status(frame).textContent()).resolves.toBe(
      "Not uploaded: big.mp4 is too large (30.0 MiB, 31,457,281 bytes); the limit is 30.0 MiB, 31,457,280 bytes. Nothing was sent.",
    );
    await expect(upload.isDisabled()).resolves.toBe(true);

    await choose(frame, {
      name: "notes.png",
      mimeType: "image/png",
      buffer: Buffer.from("only words, no picture"),
    });
    await upload.click();
    await expect
      .poll(() => status(frame).textContent())
      .toBe(
        "Not uploaded: notes.png is not a recognizable media file; uploads must be image, video or audio (judged by its bytes). Nothing reached the service. Choose the file again to retry.",
      );
    await b.page.screenshot({ path: join(SHOTS, "upload-not-media.png") });

    // A host that mixes up the chunks (chunk 0 arrives numbered 1, then 7): the server refuses,
    // the view says so.
    const wav = renderAudio("three chunks", 80);
    const shifted = (seq: number) => (name: string, args: Record<string, unknown>) =>
      name === "viewer_upload" && args.seq === 0 ? { ...args, seq } : args;
    for (const [seq, said] of [
      [
        1,
        /^Not uploaded: chunk 1 arrived before chunk 0; chunk 0 goes first, then the rest in any order; the upload was abandoned and nothing was sent: choose the file again\.$/,
      ],
      [7, /^Not uploaded: chunk 7 is past the last one \(2\) of a \d+-byte file; the upload was abandoned/],
    ] as const) {
      const view = (await b.show("upload_asset", {}, { tamper: shifted(seq) })).frame;
      await choose(view, { name: "tune.wav", mimeType: "audio/wav", buffer: wav });
      await view.getByRole("button", { name: "Upload", exact: true }).click();
      await expect.poll(() => status(view).textContent(), { timeout: 15_000 }).toMatch(said);
    }
    expect(uploads()).toBe(before);
  });

  it("says so when the connection breaks while the file is on its way to the service, and never sends it again", async () => {
    s.sandbox.faults.inject(ASSETS, { kind: "reset-after-commit" });
    const dispatched = s.sandbox.stats.dispatches(ASSETS);
    const { frame } = await b.show("upload_asset", {});
    await choose(frame, { name: "cut.png", mimeType: "image/png", buffer: renderImage("cut off", "1:1") });
    await frame.getByRole("button", { name: "Upload", exact: true }).click();
    await expect
      .poll(() => status(frame).textContent(), { timeout: 15_000 })
      .toMatch(
        /^Not uploaded: The upload broke off on its way to the service \(NETWORK_ERROR\): the service may or may not have it, and uploading it again could make a second copy\. Nothing was repeated\. Choose the file again to retry\.$/,
      );
    // The service took it once (its outcome unknown to the server); nothing was sent a second time.
    expect(s.sandbox.stats.dispatches(ASSETS)).toBe(dispatched + 1);
    await b.page.screenshot({ path: join(SHOTS, "upload-broke-off.png") });
  });

  it("gives Download in a host without a download of its own: the host opens a fresh signed link", async () => {
    const { frame, result } = await b.show(
      "generate_image",
      { model: "sandbox-image-fast", prompt: "a kite", wait: 30 },
      { capabilities: { serverTools: {}, serverResources: {}, openLinks: {} } },
    );
    await frame.getByRole("button", { name: "Download", exact: true }).click();
    await expect.poll(async () => (await log()).opened.length).toBe(1);
    const opened = (await log()).opened[0] ?? "";
    expect(opened).toMatch(new RegExp(`^${s.baseUrl}/sandbox/files/`));
    const taskId = (result.structuredContent as { task: { id: string } }).task.id;
    const expected = (await s.client.readResource({ uri: `generation://tasks/${taskId}/outputs/0` }))
      .contents[0] as {
      blob: string;
    };
    expect(
      Buffer.from(await (await fetch(opened)).arrayBuffer()).equals(Buffer.from(expected.blob, "base64")),
    ).toBe(true);
    // A host that neither downloads nor opens links: the link, to open or copy.
    const bare = await b.show(
      "generate_image",
      { model: "sandbox-image-fast", prompt: "a kite again", wait: 30 },
      { capabilities: { serverTools: {}, serverResources: {} } },
    );
    await bare.frame.getByRole("button", { name: "Download", exact: true }).click();
    const link = bare.frame.locator(".action-status a");
    await link.waitFor();
    await expect(link.getAttribute("href")).resolves.toMatch(new RegExp(`^${s.baseUrl}/sandbox/files/`));
  });
});
