/**
 * generate_batch through the in-process harness: every item's errors at once with nothing sent,
 * one ceiling divided among the items, a replayed batch that dispatches nothing again, a partly
 * failed batch that says what was charged, and the whole answer of a success and a refusal.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { formatAnswer } from "./answer-format.js";
import { type Harness, type HarnessOptions, harness, structured, textOf } from "./harness.js";

const IMAGE = "POST /api/generate/image";
const VIDEO = "POST /api/generate/video";

type Item = {
  index: number;
  identity: string;
  maxGems?: number;
  created?: boolean;
  task?: { id: string; status: string; chargedGems: number; quotedGems: number };
  error?: { code: string; message: string };
};
type Batch = {
  idempotencyKey: string;
  items: Item[];
  gems: { estimated?: number; ceiling?: number; quoted: number; charged: number };
  next: string;
};

let h: Harness;
const open = async (o?: HarnessOptions) => {
  h = await harness(o);
  return h;
};
fakeTimeEach();
afterEach(() => h?.close());

const image = (prompt: string, parameters: Record<string, unknown> = {}) => ({
  tool: "generate_image",
  arguments: { model: "sandbox-image-fast", prompt, parameters },
});

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
