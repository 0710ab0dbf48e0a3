/**
 * The viewer's Approve button in a real MCP Apps host: the MCP Inspector's own web UI (2.12.0,
 * pinned; test/helpers/inspector.ts) in Debian's Chromium, over Streamable HTTP to the built CLI
 * with GENERATION_CONFIRM_ABOVE_GEMS=10, against the sandbox of this process on loopback (so the
 * test counts what reaches it). From the Apps tab, as a user would: generate_image above the
 * threshold answers a quote (nothing sent); the view shows Approve for the exact amount; a click
 * sends the same call with the quote's token, once, and the view shows the task done with what was
 * charged; a second click sends nothing more. Screenshots: .tmp/viewer/inspector-approve-*.png.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { openApp } from "../helpers/inspector-apps.js";

const SHOTS = join(ROOT, ".tmp", "viewer");
const IMAGE = "POST /api/generate/image";

const install = inspectorOrMissing();
const ready = runnableOrSkipped(
  typeof install === "string" ? install : undefined,
  "test/viewer/inspector-approve.test.ts",
);

describe.skipIf(!ready)("the viewer's Approve in the MCP Inspector's web UI (Apps tab)", () => {
  const iso = isolatedEnv();
  let browser: Browser;
  let sandbox: Sandbox;
  let server: Started;
  let inspector: RunningInspector | undefined;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    sandbox = createSandbox({ timeScale: 10 });
    const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
    server = await startHttpCli([], {
      ...iso.env,
      GENERATION_BASE_URL: listening.url,
      GENERATION_API_KEY: SANDBOX_API_KEY,
      GENERATION_CONFIRM_ABOVE_GEMS: "10",
    });
    inspector = await startInspector(
      install as InspectorInstall,
      ["--transport", "http", "--server-url", server.url],
      { PATH: process.env.PATH ?? "", HOME: iso.dir },
    );
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await inspector?.stop();
    await server?.stop();
    await sandbox?.close();
    iso.cleanup();
  });

  it("a question left unanswered becomes a quote; Approve sends the call once with its token and shows the task charged", async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    try {
      const page = await context.newPage();
      // What the Inspector's page sends its proxy (/api/mcp/send, the message wrapped): each tools/call.
      const calls: Array<{ name?: string; arguments?: Record<string, unknown> }> = [];
      context.on("request", (r) => {
        if (!r.url().includes("/api/mcp/send")) return;
        const sent = (JSON.parse(r.postData() ?? "{}") as { message?: { method?: string; params?: object } })
          .message;
        if (sent?.method === "tools/call") calls.push(sent.params as (typeof calls)[number]);
      });
      await connectInspector(page, inspector?.url ?? "", { shots: SHOTS });
      await page.getByText("Apps", { exact: true }).first().click();
      const args = {
        model: "sandbox-image-pro",
        prompt: "a kingfisher over the river",
        parameters: { resolution: "2K", outputCount: 2 },
        wait: 0,
      };
      // The Inspector declares elicitation (form and url) and draws the question in a dialog of its
      // own; the user leaves it. After QUESTION_ANSWER_MS (25 s) the call answers a quote instead,
      // the Inspector closes the dialog, and the view shows the quote.
      const asked = page.getByText("Elicitation Request", { exact: true });
      const opened = openApp(page, "Generate an image", args, ".quote");
      await asked.waitFor({ timeout: 20_000 });
      await expect(page.getByText(/may spend about 32 Gems/).count()).resolves.toBe(1);
      await page.screenshot({ path: join(SHOTS, "inspector-approve-asked.png") });
      const view = await opened;
      await expect.poll(() => asked.count(), { timeout: 10_000 }).toBe(0);
      await expect(view.locator(".quote").textContent()).resolves.toMatch(/about 32 Gems/);
      expect(sandbox.stats.requests(IMAGE)).toBe(0);
      expect(calls.filter((c) => c.name === "generate_image")).toHaveLength(1);
      await page.screenshot({ path: join(SHOTS, "inspector-approve-quote.png") });

      // Approve, clicked twice in a row: the call goes out once, with the quote's token added.
      await view.getByRole("button", { name: "Approve 32 Gems" }).dblclick();
      const status = view.locator(".status[data-status]");
      await expect
        .poll(() => status.getAttribute("data-status"), { timeout: 30_000, interval: 500 })
        .toBe("succeeded");
      const taskId = /^Task (task_\w+): succeeded/.exec((await status.textContent()) ?? "")?.[1];
      expect(taskId).toBeDefined();
      await expect(view.locator("footer").textContent()).resolves.toMatch(
        /Gems: quoted 32, charged 32, released 0/,
      );
      const sent = calls.filter((c) => c.name === "generate_image");
      expect(sent).toHaveLength(2);
      expect(sent[0]?.arguments).toEqual(args);
      const { approval, ...rest } = sent[1]?.arguments ?? {};
      expect(rest).toEqual(args);
      expect(approval).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(sandbox.stats.requests(IMAGE)).toBe(1);
      // The task is the one the service made for that request, and the button is gone.
      await expect(view.getByRole("button", { name: /^Approve/ }).count()).resolves.toBe(0);
      expect(calls.filter((c) => c.name === "generate_image")).toHaveLength(2);
      await page.screenshot({ path: join(SHOTS, "inspector-approve-sent.png") });
    } finally {
      await context.close();
    }
  }, 120_000);
});
