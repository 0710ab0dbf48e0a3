/**
 * The viewer's Approve button in Debian's Chromium, in the test host built on the ext-apps SDK's
 * AppBridge, over the built server on stdio (GENERATION_CONFIRM_ABOVE_GEMS set; a host with no
 * elicitation) and the sandbox on loopback: a quote shows the amount and sends nothing; a click
 * re-issues the call with its token added, once, and the view shows the task.
 * Screenshots go to .tmp/viewer/approve-*.png.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, runnableOrSkipped } from "../helpers/chromium.js";
import { ROOT } from "../helpers/cli.js";
import { type Browser, openBrowser } from "./browser.js";
import { type Stack, startStack } from "./stack.js";

const SHOTS = join(ROOT, ".tmp", "viewer");
const IMAGE = "POST /api/generate/image";
const available = runnableOrSkipped(chromiumMissing(), "test/viewer/approve-view.test.ts");

describe.skipIf(!available)("the viewer's Approve on a quote, in Chromium", () => {
  let s: Stack;
  let b: Browser;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startStack({ timeScale: 10, env: { GENERATION_CONFIRM_ABOVE_GEMS: "10" } });
    b = await openBrowser(s.client);
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await s?.close();
  });

  it("shows the amount, sends nothing until Approve, then sends the call once under it", async () => {
    const args = {
      model: "sandbox-image-pro",
      prompt: "a kingfisher",
      parameters: { resolution: "2K", outputCount: 2 },
      wait: 0,
    };
    const { frame, result } = await b.show("generate_image", args);
    const approval = (result.structuredContent as { approval: { gems: number } }).approval;
    expect(approval.gems).toBe(32);
    await expect(frame.locator(".quote").textContent()).resolves.toMatch(/about 32 Gems/);
    expect(s.sandbox.stats.requests(IMAGE)).toBe(0);
    await b.page.screenshot({ path: join(SHOTS, "approve-quote.png") });
    const button = frame.getByRole("button", { name: "Approve 32 Gems" });
    await button.click();
    // The view shows the task the approved call made, and the call went out once.
    await expect.poll(async () => frame.locator("footer").textContent(), { timeout: 20_000 }).toMatch(/gm-/);
    expect(s.sandbox.stats.requests(IMAGE)).toBe(1);
    const calls = b.requests.filter((r) => r.method === "tools/call" && r.params.name === "generate_image");
    expect(calls).toHaveLength(1);
    await b.page.screenshot({ path: join(SHOTS, "approve-sent.png") });
  }, 60_000);
});
