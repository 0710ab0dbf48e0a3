/**
 * A generate_batch answer in the viewer, in Debian's Chromium inside the test host built on the
 * ext-apps SDK's AppBridge, over the built server on stdio and the sandbox on loopback: one gallery
 * with every item in order (its tool, identity and task, its images loaded from the sandbox's
 * signed URLs), an item the service refused shown as refused with its reason, and the Gems of the
 * whole as the answer gave them. A batch sent while its items still run is followed to the end.
 * Screenshots go to .tmp/viewer/batch-*.png.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, runnableOrSkipped } from "../helpers/chromium.js";
import { ROOT } from "../helpers/cli.js";
import { type Browser, openBrowser } from "./browser.js";
import { probe } from "./probes-api.js";
import { type Stack, startStack } from "./stack.js";

const SHOTS = join(ROOT, ".tmp", "viewer");
const VIDEO = "POST /api/generate/video";
const available = runnableOrSkipped(chromiumMissing(), "test/viewer/gallery-view.test.ts");

type Item = {
  index: number;
  tool: string;
  identity: string;
  task?: { id: string; status: string; chargedGems: number; outputs: unknown[] };
  error?: { code: string; message: string };
};
type Batch = { idempotencyKey: string; items: Item[]; gems: { quoted: number; charged: number } };

const image = (prompt: string, outputCount = 1) => ({
  tool: "generate_image",
  arguments: { model: "sandbox-image-fast", prompt, parameters: { outputCount } },
});
const video = {
  tool: "generate_video",
  arguments: { model: "sandbox-video-lite", prompt: "a tide", parameters: { mode: "text-to-video" } },
};

describe.skipIf(!available)("a generate_batch answer in the viewer, in Chromium", () => {
  let s: Stack;
  let b: Browser;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startStack({ timeScale: 10 });
    b = await openBrowser(s.client);
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await s?.close();
  });

  it("shows every item in one gallery: images loaded, the refused item as refused, the Gems of the whole", async () => {
    // The service refuses the one video item; the image items go through.
    s.sandbox.faults.inject(VIDEO, { status: 422, code: "INVALID_PARAMETERS", message: "no tides today" });
    const { frame, result } = await b.show("generate_batch", {
      items: [image("a red kite"), image("a blue heron", 2), video],
      idempotencyKey: "gallery-batch",
      wait: 30,
    });
    const batch = result.structuredContent as Batch;
    expect(batch.items.map((i) => i.task?.status ?? i.error?.code)).toEqual([
      "succeeded",
      "succeeded",
      "INVALID_PARAMETERS",
    ]);

    const sections = frame.locator("section.item");
    await expect.poll(() => sections.count()).toBe(3);
    // Three images in all (one, then two), each loaded from the sandbox's signed URL.
    await expect.poll(async () => (await probe(frame, "images")).filter((i) => i.loaded).length).toBe(3);
    const imgs = await probe(frame, "images");
    expect(imgs.map((i) => i.source)).toEqual(["url", "url", "url"]);
    expect(imgs.map((i) => i.alt.replace(/:.*/, ""))).toEqual([
      "Image 1 of 1",
      "Image 1 of 2",
      "Image 2 of 2",
    ]);
    expect(imgs[1]?.alt).toContain("a blue heron");
    for (const img of imgs) expect(img.src.startsWith(s.baseUrl)).toBe(true);

    // Each item in order, with its tool, identity and task; the refused one says so and why.
    for (const item of batch.items) {
      const text = (await sections.nth(item.index).textContent()) ?? "";
      expect(text).toContain(`Item ${item.index + 1} · ${item.tool}`);
      expect(text).toContain(item.identity);
      if (item.task) {
        expect(text).toContain(`Task ${item.task.id}: succeeded`);
        expect(text).toContain(`charged ${item.task.chargedGems}`);
      }
    }
    const refused = frame.locator("section.item.refused");
    await expect(refused.count()).resolves.toBe(1);
    await expect(refused.getAttribute("data-index")).resolves.toBe("2");
    const why = (await refused.textContent()) ?? "";
    expect(why).toMatch(/refused/);
    expect(why).toContain("INVALID_PARAMETERS");
    expect(why).toContain("nothing charged");
    expect(await refused.locator("img").count()).toBe(0);

    // The whole: what was sent and refused, and the Gems as the answer counted them.
    const summary = (await frame.locator(".batch-summary").textContent()) ?? "";
    expect(summary).toContain("Batch of 3 items: 2 sent, 1 refused, 2 done");
    expect(summary).toContain(`quoted ${batch.gems.quoted}, charged ${batch.gems.charged}`);
    expect(batch.gems.charged).toBeGreaterThan(0);
    await expect(frame.locator(".batch-footer").textContent()).resolves.toContain("gallery-batch");
    await b.page.screenshot({ path: join(SHOTS, "batch-gallery.png"), fullPage: true });
  }, 60_000);

  it("follows items still running when the answer came, until each is done", async () => {
    const { frame, result } = await b.show("generate_batch", {
      items: [image("a slow owl [sandbox:slow]"), image("a quick wren")],
      wait: 0,
    });
    const batch = result.structuredContent as Batch;
    expect(batch.items.some((i) => i.task?.status !== "succeeded")).toBe(true);
    // The view asks viewer_read_task for each unfinished task until both are shown succeeded.
    await expect
      .poll(async () => frame.locator(".status-succeeded").count(), { timeout: 45_000, interval: 500 })
      .toBe(2);
    await expect.poll(async () => (await probe(frame, "images")).filter((i) => i.loaded).length).toBe(2);
    const reads = b.requests.filter((r) => r.method === "tools/call" && r.params.name === "viewer_read_task");
    expect(reads.length).toBeGreaterThan(0);
    await expect(frame.locator(".batch-summary").textContent()).resolves.toContain("2 sent, 2 done");
    await b.page.screenshot({ path: join(SHOTS, "batch-followed.png"), fullPage: true });
  }, 60_000);
});
