/**
 * A remote user's own media through the viewer, in a real MCP Apps host: the MCP Inspector's own
 * web UI (2.12.0, pinned; test/helpers/inspector.ts) in Debian's Chromium, over Streamable HTTP to
 * the built CLI, with key auth and with `--auth oauth` (signed in on the server's page, no
 * GENERATION_FILES: no file of the server is used). The sandbox runs in this process on loopback, so
 * the test counts what reaches it. From the Apps tab, as a user would: the model-side call opens the
 * upload form; a PNG, an MP4 and a WAV recording (a voice, with the rights box) are chosen with
 * the browser's file chooser; the asset appears with its ID, which reaches the conversation (the
 * Inspector shows the view's messages); generate_video with that asset as sourceImage succeeds, and
 * Download gives the video's bytes. Refusals (non-media, too large, no rights box, chunks out of
 * order or past the total) are shown in the view with nothing reaching the service.
 * Screenshots: .tmp/viewer/inspector-upload-*.png.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderVideo } from "../../src/sandbox/media/mp4.js";
import { renderImage } from "../../src/sandbox/media/png.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import { createSandbox, SANDBOX_API_KEY, type Sandbox } from "../../src/sandbox/sandbox.js";
import { launchChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, ROOT, type Started, startHttpCli } from "../helpers/cli.js";
import {
  connectInspector,
  type InspectorInstall,
  inspectorOrMissing,
  type RunningInspector,
  startInspector,
} from "../helpers/inspector.js";
import { choose, openApp, send, upload } from "../helpers/inspector-apps.js";
import { freePort } from "../ledger/stores.js";

const SHOTS = join(ROOT, ".tmp", "viewer");
const ASSETS = "POST /api/generate/assets";
const VOICES = "POST /api/generate/voices";

const install = inspectorOrMissing();
const ready = runnableOrSkipped(
  typeof install === "string" ? install : undefined,
  "test/viewer/inspector-upload.test.ts",
);

/** The built CLI over HTTP against the sandbox of this process, in key or OAuth mode, and the Inspector. */
async function startAll(oauth: boolean): Promise<{
  sandbox: Sandbox;
  server: Started;
  inspector: RunningInspector;
  stop(): Promise<void>;
}> {
  const sandbox = createSandbox({ timeScale: 5 });
  const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  const iso = isolatedEnv({ GENERATION_BASE_URL: listening.url });
  let server: Started;
  if (oauth) {
    // As the README's deploy example: no GENERATION_FILES, so no path and no save of the server's is used.
    const { GENERATION_FILES: _unset, ...env } = iso.env;
    const port = await freePort();
    server = await startHttpCli(["--auth", "oauth", "--port", String(port)], {
      ...env,
      GENERATION_PUBLIC_URL: `http://127.0.0.1:${port}`,
      GENERATION_AUTH_SECRET: Buffer.alloc(32, 7).toString("base64"),
    });
  } else server = await startHttpCli([], { ...iso.env, GENERATION_API_KEY: SANDBOX_API_KEY });
  const inspector = await startInspector(
    install as InspectorInstall,
    ["--transport", "http", "--server-url", server.url],
    { PATH: process.env.PATH ?? "", HOME: iso.dir },
  );
  return {
    sandbox,
    server,
    inspector,
    async stop() {
      await inspector.stop();
      await server.stop();
      await sandbox.close();
      iso.cleanup();
    },
  };
}

/** Connects to the one server listed (signing in on the server's page in OAuth mode); opens the Apps tab. */
async function connect(page: Page, url: string, oauth: boolean): Promise<void> {
  await connectInspector(page, url, { shots: SHOTS, ...(oauth ? { key: SANDBOX_API_KEY } : {}) });
  await page.getByText("Apps", { exact: true }).first().click();
}

/** The view's messages as the Inspector shows them ("Messages from app"). */
const messages = (page: Page) => page.getByTestId("apps-messages").textContent();

/**
 * The walk-through both modes share: PNG, MP4 and voice uploads, the IDs handed on, then the PNG
 * animated by generate_video and its video downloaded.
 */
async function bringAndTake(
  page: Page,
  all: Awaited<ReturnType<typeof startAll>>,
  shot: string,
): Promise<void> {
  const { sandbox } = all;
  let view = await openApp(page, "Upload a media file", {}, ".upload");
  await expect(view.locator(".limits").textContent()).resolves.toMatch(/up to 30 MiB/);
  const png = await upload(page, view, {
    name: "my-photo.png",
    mimeType: "image/png",
    buffer: renderImage("mine", "16:9"),
  });
  expect(png).toMatch(/^ast_/);
  await expect(view.locator(".status.uploaded").textContent()).resolves.toMatch(/asset ast_\w+ · image · /);
  await expect.poll(() => messages(page), { timeout: 10_000 }).toContain(`asset ${png} (image`);
  await page.screenshot({ path: join(SHOTS, `inspector-upload-${shot}-png.png`) });

  await view.getByRole("button", { name: "Upload another file" }).click();
  const mp4 = await upload(page, view, {
    name: "clip.mp4",
    mimeType: "video/mp4",
    buffer: renderVideo("clip", 2, "16:9"),
  });
  await expect(view.locator(".status.uploaded").textContent()).resolves.toMatch(
    new RegExp(`asset ${mp4} · video · `),
  );
  await expect.poll(() => messages(page)).toContain(`asset ${mp4} (video`);

  view = await openApp(page, "Upload a reference voice", {}, ".upload");
  const voice = await upload(
    page,
    view,
    { name: "my-voice.wav", mimeType: "audio/wav", buffer: renderAudio("me", 20) },
    true,
  );
  expect(voice).toMatch(/^voice_own_/);
  await expect.poll(() => messages(page)).toContain(`private voice: ${voice}`);
  expect([sandbox.stats.requests(ASSETS), sandbox.stats.requests(VOICES)]).toEqual([2, 1]);

  // "Now animate it": the model would pass the ID it was handed.
  view = await openApp(
    page,
    "Generate a video",
    {
      model: "sandbox-video-lite",
      prompt: "animate my photo",
      parameters: { mode: "image-to-video", sourceImage: png },
      wait: 60,
    },
    '.status[data-status="succeeded"]',
  );
  await expect
    .poll(() => view.evaluate("document.querySelector('video')?.readyState ?? 0"), { timeout: 20_000 })
    .toBeGreaterThan(0);
  const src = String(await view.evaluate("document.querySelector('video').currentSrc"));
  const expected = Buffer.from(await (await fetch(src)).arrayBuffer());
  expect(expected.subarray(4, 8).toString()).toBe("ftyp");
  await page.screenshot({ path: join(SHOTS, `inspector-upload-${shot}-video.png`) });
  page.once("dialog", (dialog) => void dialog.accept());
  const [download] = await Promise.all([
    page.waitForEvent("download", { timeout: 20_000 }),
    view.getByRole("button", { name: "Download", exact: true }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^task_\w+-0\.mp4$/);
  expect(readFileSync(await download.path()).equals(expected)).toBe(true);
}

describe.skipIf(!ready)("a remote user's own media in the MCP Inspector's web UI (Apps tab)", () => {
  let browser: Browser;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  const session = async (
    oauth: boolean,
    run: (page: Page, all: Awaited<ReturnType<typeof startAll>>) => Promise<void>,
  ) => {
    const all = await startAll(oauth);
    let context: BrowserContext | undefined;
    try {
      context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
      const page = await context.newPage();
      await connect(page, all.inspector.url, oauth);
      await run(page, all);
    } finally {
      await context?.close();
      await all.stop();
    }
  };

  it("over HTTP with key auth: uploads a PNG, an MP4 and a voice, animates the PNG, downloads the video", async () => {
    await session(false, (page, all) => bringAndTake(page, all, "http"));
  }, 180_000);

  it("over HTTP with --auth oauth, no GENERATION_FILES: the same, signed in on the server's page", async () => {
    await session(true, (page, all) => bringAndTake(page, all, "oauth"));
  }, 180_000);

  it("refuses in the view, before a byte reaches the service: non-media, too large, no rights box, a chunk before chunk 0 or past the total", async () => {
    await session(false, async (page, { sandbox }) => {
      const reached = () => sandbox.stats.requests(ASSETS) + sandbox.stats.requests(VOICES);
      const status = (view: Frame) => view.locator(".upload-status");
      let view = await openApp(page, "Upload a media file", {}, ".upload");
      await send(page, view, {
        name: "notes.png",
        mimeType: "image/png",
        buffer: Buffer.from("words, not a picture"),
      });
      await expect
        .poll(() => status(view).textContent(), { timeout: 15_000 })
        .toMatch(
          /^Not uploaded: notes\.png is not a recognizable media file; uploads must be image, video or audio \(judged by its bytes\)\. Nothing reached the service\./,
        );
      await choose(page, view, {
        name: "huge.mp4",
        mimeType: "video/mp4",
        buffer: Buffer.alloc(31_457_281, 1),
      });
      await expect(status(view).textContent()).resolves.toMatch(
        /^Not uploaded: huge\.mp4 is too large .*Nothing was sent\.$/,
      );
      await page.screenshot({ path: join(SHOTS, "inspector-upload-refused.png") });

      // The Inspector's page passes the view's calls to its own backend (/api/mcp/send), which
      // sends them on to the server: a host that mixes up the chunks on the way (chunk 0 arrives
      // numbered 1, then 9) is refused, and the view says so.
      const relay = /\/api\/mcp\/send$/;
      for (const [seq, said] of [
        [1, /^Not uploaded: chunk 1 arrived before chunk 0; chunk 0 goes first/],
        [9, /^Not uploaded: chunk 9 is past the last one \(2\)/],
      ] as const) {
        await page.route(relay, async (route) => {
          const body = route.request().postData() ?? "";
          if (!body.includes('"name":"viewer_upload"') || !body.includes('"seq":0,')) return route.continue();
          await route.continue({ postData: body.replace('"seq":0,', `"seq":${seq},`) });
        });
        view = await openApp(page, "Upload a media file", {}, ".upload");
        await send(page, view, { name: "tune.wav", mimeType: "audio/wav", buffer: renderAudio("tune", 80) });
        await expect.poll(() => status(view).textContent(), { timeout: 15_000 }).toMatch(said);
        await page.unroute(relay);
      }

      view = await openApp(page, "Upload a reference voice", {}, ".upload");
      await send(page, view, { name: "voice.wav", mimeType: "audio/wav", buffer: renderAudio("voice", 20) });
      await expect(status(view).textContent()).resolves.toMatch(
        /^Not uploaded: tick the box to confirm you have the speaker's permission/,
      );
      expect(reached()).toBe(0);
    });
  }, 180_000);
});
