/**
 * generate_batch through the in-process harness: every item's errors at once with nothing sent,
 * one ceiling divided among the items, a replayed batch that dispatches nothing again, a partly
 * failed batch that says what was charged, and the whole answer of a success and a refusal.
 */
import { afterEach, describe, expect, it } from "vitest";
import { drive, fakeTimeEach } from "../helpers/fake-time.js";
import { type Batch, imageItem } from "./batch-fixtures.js";
import { type Harness, type HarnessOptions, harness, structured, textOf } from "./harness.js";

const IMAGE = "POST /api/generate/image";
const VIDEO = "POST /api/generate/video";

let h: Harness;
const open = async (o?: HarnessOptions) => {
  h = await harness(o);
  return h;
};
fakeTimeEach();
afterEach(() => h?.close());

const image = imageItem;

describe("generate_batch", () => {
  it("answers every item's task, outputs and Gems, under one ceiling divided among them", async () => {
    await open();
    const r = await h.call("generate_batch", {
      items: [image("a fox"), image("a kite", { outputCount: 2 }), image("a boat")],
      maxGems: 12,
      wait: 20,
    });
    expect(r.isError ?? false).toBe(false);
    const s = structured<Batch>(r);
    expect(s.items.map((i) => i.identity)).toEqual([0, 1, 2].map((i) => `${s.idempotencyKey}.${i}`));
    expect(s.items.every((i) => i.task?.status === "succeeded")).toBe(true);
    // Estimates 2, 4 and 2 Gems share 12 in proportion: 3, 6 and 3.
    expect(s.items.map((i) => i.maxGems)).toEqual([3, 6, 3]);
    expect(s.gems).toMatchObject({ estimated: 8, ceiling: 12 });
    expect(s.gems.charged).toBe(s.items.reduce((a, i) => a + (i.task?.chargedGems ?? 0), 0));
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(3);
    const links = r.content.filter((c) => c.type === "resource_link");
    expect(links.length).toBe(4);
    // Every record is delivered with the answer: the batch's and each item's.
    const records = await h.ledger.list(h.engine.keyHash);
    expect(records.map((x) => [x.tool, x.delivered]).sort()).toEqual([
      ["generate_batch", true],
      ["generate_image", true],
      ["generate_image", true],
      ["generate_image", true],
    ]);
  });

  it("reports every item's errors in one INVALID_ARGUMENT, an unknown model among them; nothing sent or recorded", async () => {
    await open();
    const r = await h.call("generate_batch", {
      items: [
        image("fine"),
        { tool: "generate_image", arguments: { model: "nope", prompt: "x" } },
        { tool: "generate_video", arguments: { model: "sandbox-video-lite", prompt: "", colour: 1 } },
        { tool: "generate_image", arguments: { model: "sandbox-image-fast", prompt: "x", wait: 5 } },
      ],
    });
    expect(r.isError).toBe(true);
    const text = textOf(r);
    expect(text).toMatch(/^INVALID_ARGUMENT: \d+ errors in the batch's items, so no item was sent/);
    expect(text).toContain('items[1].arguments.model: "nope" is not in the model catalog');
    expect(text).toContain("items[2].arguments.prompt");
    expect(text).toContain("items[2].arguments: unknown field(s) colour");
    expect(text).toContain("items[3].arguments.wait: a batch has one wait");
    expect(h.sandbox.stats.requests(IMAGE) + h.sandbox.stats.requests(VIDEO)).toBe(0);
    expect(await h.ledger.list(h.engine.keyHash)).toEqual([]);
  });

  it("a replayed batch (same idempotencyKey) dispatches nothing again and answers the same tasks", async () => {
    await open();
    const args = { items: [image("one"), image("two")], idempotencyKey: "story-1", wait: 20 };
    const a = structured<Batch>(await h.call("generate_batch", args));
    const b = structured<Batch>(await h.call("generate_batch", args));
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(2);
    expect(b.items.map((i) => i.created)).toEqual([false, false]);
    expect(b.items.map((i) => i.identity)).toEqual(["story-1.0", "story-1.1"]);
    expect(b.items.map((i) => i.task?.id)).toEqual(a.items.map((i) => i.task?.id));
    // The same key with other items is refused, nothing sent.
    const c = await h.call("generate_batch", { ...args, items: [image("three")] });
    expect(textOf(c)).toMatch(/^IDEMPOTENCY_CONFLICT/);
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(2);
  });

  it("a batch cancelled mid-send stays undelivered: identical arguments replay it, every item too, nothing dispatched again", async () => {
    await open({ timeScale: 1 });
    const clip = (prompt: string) => ({
      tool: "generate_video",
      arguments: {
        model: "sandbox-video-lite",
        prompt,
        parameters: { mode: "text-to-video", duration: 5, ratio: "16:9" },
      },
    });
    const args = { items: [clip("waves"), clip("dunes")] };
    // The service records each item's work, then never answers: the call is still sending when cut.
    h.sandbox.faults.inject(VIDEO, { kind: "hang" }, 2);
    const abort = new AbortController();
    const first = h
      .call("generate_batch", { ...args, wait: 30 }, { signal: abort.signal })
      .catch((e: unknown) => e);
    // Real time bounds the wait (the harness's clock is fake, and moves while the call runs).
    const end = process.hrtime.bigint() + 10_000_000_000n;
    while (h.sandbox.stats.dispatches(VIDEO) < 2) {
      if (process.hrtime.bigint() > end) throw new Error("the items were not dispatched in time");
      await new Promise((r) => setImmediate(r));
    }
    abort.abort();
    expect(await first).toBeInstanceOf(Error);
    await drive(new Promise((r) => setTimeout(r, 100)));
    const records = await h.ledger.list(h.engine.keyHash);
    expect(records.every((r) => !r.delivered)).toBe(true);
    const batch = records.find((r) => r.tool === "generate_batch");
    const again = structured<Batch>(await h.call("generate_batch", { ...args, wait: 0 }));
    expect(again.idempotencyKey).toBe(batch?.idempotencyKey);
    expect(again.items.map((i) => i.created)).toEqual([false, false]);
    expect(h.sandbox.stats.dispatches(VIDEO)).toBe(2);
  });

  it("a partly failed batch says what was charged and which items to retry; isError only when all failed", async () => {
    await open();
    h.sandbox.faults.inject(IMAGE, { status: 422, code: "INVALID_PARAMETERS", message: "no" });
    const r = await h.call("generate_batch", {
      items: [image("a"), image("b [sandbox:fail]"), image("c")],
      wait: 20,
    });
    expect(r.isError ?? false).toBe(false);
    const s = structured<Batch>(r);
    const failed = s.items.filter((i) => i.error !== undefined || i.task?.status === "failed");
    expect(failed.length).toBe(2);
    expect(s.gems.charged).toBe(s.items.reduce((a, i) => a + (i.task?.chargedGems ?? 0), 0));
    expect(textOf(r)).toContain(`charged so far ${s.gems.charged}`);
    expect(s.next).toMatch(/to retry only those, call generate_batch with items/);
    const all = await h.call("generate_batch", { items: [image("d [sandbox:fail]")], wait: 20 });
    expect(all.isError).toBe(true);
    expect(textOf(all)).toMatch(/^BATCH_FAILED: every item failed/);
  });
});

const pro = (prompt: string) => ({
  tool: "generate_image",
  arguments: { model: "sandbox-image-pro", prompt, parameters: { resolution: "2K" } },
});

describe("generate_batch's one approval", () => {
  it("asks once, for the total, with tool generate_batch; the amount accepted is divided among the items", async () => {
    await open({
      config: { confirmAboveGems: 20 },
      elicit: () => ({ action: "accept", content: { confirm: true } }),
    });
    // Each item is about 16 Gems, under the threshold; the three together, 48, are above it.
    const r = await h.call("generate_batch", { items: [pro("a"), pro("b"), pro("c")], wait: 20 });
    expect(h.elicited).toHaveLength(1);
    expect(h.elicited[0]).toMatch(/^generate_batch with model sandbox-image-pro may spend about 48 Gems/);
    const s = structured<Batch>(r);
    expect(s.items.map((i) => i.maxGems)).toEqual([16, 16, 16]);
    expect(s.gems).toMatchObject({ ceiling: 48, charged: 48 });
    expect(textOf(r)).toMatch(
      /The whole batch was held to 48 Gems \(divided into each item's maxGems\), the most the user accepted/,
    );
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(3);
  });

  it("where the host cannot ask, the total above the threshold is quoted; the token sends the batch once under it", async () => {
    await open({ config: { confirmAboveGems: 20 } });
    const args = { items: [pro("a"), pro("b"), pro("c")], wait: 20 };
    const quote = await h.call("generate_batch", args);
    expect(quote.isError ?? false).toBe(false);
    expect(textOf(quote)).toMatch(/^QUOTE: nothing was sent/);
    const { approval, next } = quote.structuredContent as {
      approval: { token: string; gems: number };
      next: string;
    };
    expect(approval.gems).toBe(48);
    expect(next).toMatch(/call generate_batch again with exactly the same arguments plus approval/);
    expect(h.sandbox.stats.requests(IMAGE)).toBe(0);
    const r = await h.call("generate_batch", { ...args, approval: approval.token });
    const s = structured<Batch>(r);
    expect(s.items.map((i) => i.maxGems)).toEqual([16, 16, 16]);
    expect(s.gems).toMatchObject({ ceiling: 48, charged: 48 });
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(3);
    // Used once: the same token again sends nothing new.
    const again = await h.call("generate_batch", { ...args, approval: approval.token });
    expect(textOf(again)).toMatch(/approval/);
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(3);
  });

  it("a total under the threshold goes without a question, the threshold its ceiling", async () => {
    await open({ config: { confirmAboveGems: 20 } });
    const r = await h.call("generate_batch", { items: [image("a"), image("b")], wait: 20 });
    const s = structured<Batch>(r);
    expect(s.items.map((i) => i.maxGems)).toEqual([10, 10]);
    expect(s.gems).toMatchObject({ ceiling: 20, charged: 4 });
  });

  it("holds every item to the operator's cap, and refuses an item whose estimate is above it", async () => {
    await open({ config: { maxGems: 10 } });
    const r = await h.call("generate_batch", { items: [image("a"), image("b")], maxGems: 100, wait: 20 });
    expect(structured<Batch>(r).items.map((i) => i.maxGems)).toEqual([10, 10]);
    const over = await h.call("generate_batch", { items: [image("a"), pro("b")] });
    expect(textOf(over)).toMatch(
      /^INVALID_ARGUMENT: 1 error .*items\[1\]\.arguments\.model: the catalog's estimate for this item is about 16 Gems, above the operator's cap of 10 Gems/,
    );
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(2);
  });
});
