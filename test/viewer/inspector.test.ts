/**
 * The viewer in a real MCP Apps host: the MCP Inspector's own web UI (pinned, on the Node running vitest; see
 * test/helpers/inspector.ts), driven in Debian's Chromium through the "MCP Inspector" steps of docs/hosts.md
 * walk-through with GENERATION_FILES set: over Streamable HTTP (`npm start`, then the Inspector
 * with `--transport http --server-url`) and over stdio (the Inspector starting `node dist/cli.js
 * --sandbox` itself). From the Apps tab: generate_image, the image rendered in the view at its size,
 * Save (the file lands under GENERATION_FILES/generated), Download (the browser receives the same
 * bytes), the dark theme. Screenshots go to .tmp/viewer/inspector-*.png.
 */
import { mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { CLI, isolatedEnv, ROOT, type Started, startHttpCli } from "../helpers/cli.js";
import {
  connectInspector,
  type InspectorInstall,
  inspectorOrMissing,
  startInspector,
} from "../helpers/inspector.js";

const SHOTS = join(ROOT, ".tmp", "viewer");
const PROMPT = "a red fox in fresh snow";

const install = inspectorOrMissing();
const ready = runnableOrSkipped(
  typeof install === "string" ? install : undefined,
  "test/viewer/inspector.test.ts",
);

/** Connects to the one server listed, opens the Apps tab and runs generate_image as a user would. */
async function generateInApps(page: Page, url: string): Promise<Frame> {
  await connectInspector(page, url, { shots: SHOTS });
  await page.getByText("Apps", { exact: true }).first().click();
  await page.getByText("Generate an image", { exact: true }).click();
  await page.getByLabel("model *", { exact: true }).fill("sandbox-image-fast");
  await page.getByLabel("prompt *", { exact: true }).fill(PROMPT);
  await page.getByRole("button", { name: "Open App" }).click();
  await expect.poll(() => page.frames().some((f) => f.url() === "about:srcdoc")).toBe(true);
  const view = page.frames().find((f) => f.url() === "about:srcdoc");
  if (!view) throw new Error("the view's frame did not appear");
  await view.locator(".status").filter({ hasText: "succeeded" }).waitFor({ timeout: 30_000 });
  return view;
}

interface Shown {
  src: string;
  naturalWidth: number;
  width: number;
  cardWidth: number;
  listWidth: number;
  room: number;
}

/**
 * The one image as the view shows it, read over the DevTools protocol (the view's CSP does not
 * apply); sent as source, as this file is typed without the DOM.
 */
const SHOWN = `(() => {
  const img = document.querySelector(".output img");
  const card = document.querySelector(".output");
  const list = document.querySelector(".outputs");
  if (!img || !img.complete || img.naturalWidth === 0 || !card || !list) return undefined;
  const style = getComputedStyle(card);
  return {
    src: img.currentSrc,
    naturalWidth: img.naturalWidth,
    width: img.getBoundingClientRect().width,
    cardWidth: card.getBoundingClientRect().width,
    listWidth: list.getBoundingClientRect().width,
    room: card.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
  };
})()`;
const shownImage = (view: Frame): Promise<Shown | undefined> => view.evaluate(SHOWN);

/** Checks the image rendered, loaded from the sandbox's signed URL, at a sensible size. */
async function expectImage(view: Frame): Promise<Shown> {
  await expect.poll(() => shownImage(view), { timeout: 15_000 }).toBeDefined();
  const shown = (await shownImage(view)) as Shown;
  expect(shown.src).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sandbox\/files\//);
  // A lone output's card takes the list's whole width; the image is at its own size, up to it.
  expect(shown.cardWidth).toBeCloseTo(shown.listWidth, 0);
  expect(shown.listWidth).toBeGreaterThan(300);
  expect(shown.width).toBeCloseTo(Math.min(shown.naturalWidth, shown.room), 0);
  return shown;
}

/** Save in the view: the path it reports, under GENERATION_FILES/generated, holds the output's bytes. */
async function expectSaved(view: Frame, files: string, expected: Buffer): Promise<void> {
  await view.getByRole("button", { name: "Save", exact: true }).click();
  const status = view.locator(".action-status");
  await expect.poll(() => status.textContent(), { timeout: 15_000 }).toMatch(/^Saved: /);
  const saved = ((await status.textContent()) ?? "").replace(/^Saved: /, "").split(", ");
  expect(saved).toHaveLength(1);
  const path = realpathSync(saved[0] ?? "");
  expect(path.startsWith(join(realpathSync(files), "generated"))).toBe(true);
  expect(readFileSync(path).equals(expected)).toBe(true);
}

describe("docs/hosts.md and the README: MCP Inspector", () => {
  const hosts = readFileSync(join(ROOT, "docs", "hosts.md"), "utf8");
  const start = hosts.indexOf("## MCP Inspector");
  const section = hosts.slice(start, hosts.indexOf("\n## ", start + 4));
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");

  it("the README's short form gives the same commands", () => {
    expect(readme).toContain('GENERATION_FILES="$HOME/Pictures" npm start');
    expect(readme).toContain(
      "npx @modelcontextprotocol/inspector --transport http --server-url http://127.0.0.1:3333/mcp",
    );
  });

  it("gives the commands this test runs, with GENERATION_FILES set", () => {
    expect(section).toContain('GENERATION_FILES="$HOME/Pictures" npm start');
    expect(section).toContain(
      "npx @modelcontextprotocol/inspector --transport http --server-url http://127.0.0.1:3333/mcp",
    );
    expect(section).toContain(
      'npx @modelcontextprotocol/inspector -e GENERATION_FILES="$HOME/Pictures" node /absolute/path/to/generation-mcp/dist/cli.js --sandbox',
    );
    for (const step of ["Apps", "Generate an image", "sandbox-image-fast", "Open App", "Save", "Download"])
      expect(section).toContain(step);
  });
});

describe.skipIf(!ready)("the viewer in the MCP Inspector's web UI (Apps tab)", () => {
  let browser: Browser;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe("README: `npm start`, then the Inspector over Streamable HTTP", () => {
    const iso = isolatedEnv();
    const files = join(iso.dir, "Pictures");
    let server: Started;
    let stopInspector = async () => {};
    afterAll(async () => {
      await stopInspector();
      await server?.stop();
      iso.cleanup();
    });

    it("shows the image, saves it under GENERATION_FILES, downloads its bytes, and follows the dark theme", async () => {
      mkdirSync(files);
      // `npm start` is `node dist/cli.js --sandbox --transport http` (on port 3333; any free port here).
      server = await startHttpCli(["--sandbox"], { ...iso.env, GENERATION_FILES: files });
      // What `npm start` prints is what runs here.
      expect(server.stdout()).toContain(
        `npx @modelcontextprotocol/inspector --transport http --server-url ${server.url}`,
      );
      const inspector = await startInspector(
        install as InspectorInstall,
        ["--transport", "http", "--server-url", server.url],
        { PATH: process.env.PATH ?? "", HOME: iso.dir },
      );
      stopInspector = inspector.stop;
      const context = await browser.newContext({
        viewport: { width: 1400, height: 1000 },
        acceptDownloads: true,
      });
      try {
        const page = await context.newPage();
        const view = await generateInApps(page, inspector.url);
        const shown = await expectImage(view);
        const bytes = Buffer.from(await (await fetch(shown.src)).arrayBuffer());
        expect(bytes.subarray(1, 4).toString()).toBe("PNG");
        await page.screenshot({ path: join(SHOTS, "inspector-http.png") });

        await expectSaved(view, files, bytes);

        // The Inspector asks before an app downloads anything (window.confirm); the user agrees.
        let asked = "";
        page.once("dialog", (dialog) => {
          asked = dialog.message();
          void dialog.accept();
        });
        const [download] = await Promise.all([
          page.waitForEvent("download", { timeout: 15_000 }),
          view.getByRole("button", { name: "Download", exact: true }).click(),
        ]);
        expect(download.suggestedFilename()).toMatch(/^task_\w+-0\.png$/);
        expect(asked).toContain(download.suggestedFilename());
        expect(readFileSync(await download.path()).equals(bytes)).toBe(true);

        await page.getByRole("button", { name: "Toggle color scheme" }).click();
        await expect.poll(() => view.evaluate("document.documentElement.dataset.theme")).toBe("dark");
        await page.screenshot({ path: join(SHOTS, "inspector-http-dark.png") });
      } finally {
        await context.close();
      }
    }, 90_000);
  });

  describe("README: the Inspector starting the server over stdio", () => {
    const iso = isolatedEnv();
    const files = join(iso.dir, "Pictures");
    let stopInspector = async () => {};
    afterAll(async () => {
      await stopInspector();
      iso.cleanup();
    });

    it("shows the image from the sandbox's loopback origin and saves it under GENERATION_FILES", async () => {
      mkdirSync(files);
      // The Inspector gives a stdio server only a few variables of its own environment (PATH,
      // HOME, …): GENERATION_FILES goes with -e, as docs/hosts.md says.
      const inspector = await startInspector(
        install as InspectorInstall,
        ["-e", `GENERATION_FILES=${files}`, "node", CLI, "--sandbox"],
        { PATH: process.env.PATH ?? "", HOME: iso.dir },
      );
      stopInspector = inspector.stop;
      const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
      try {
        const page = await context.newPage();
        const view = await generateInApps(page, inspector.url);
        const shown = await expectImage(view);
        await page.screenshot({ path: join(SHOTS, "inspector-stdio.png") });
        await expectSaved(view, files, Buffer.from(await (await fetch(shown.src)).arrayBuffer()));
      } finally {
        await context.close();
      }
    }, 90_000);
  });
});
