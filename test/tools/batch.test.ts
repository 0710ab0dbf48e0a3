/**
 * generate_batch through the in-process harness: every item's errors at once with nothing sent,
 * one ceiling divided among the items, a replayed batch that dispatches nothing again, a partly
 * failed batch that says what was charged, and the whole answer of a success and a refusal.
 */
import { afterEach, describe, expect, it } from "vitest";
import { drive, fakeTimeEach } from "../helpers/fake-time.js";
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

describe("generate_batch's money invariant against the sandbox", () => {
  it("charges no more than the batch's maxGems in all, nor any item more than the operator's cap (random mixes)", async () => {
    await open({ config: { maxGems: 20 } });
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const kinds = [
      () => image(`fast ${next()}`, { outputCount: 1 + Math.floor(next() * 4) }),
      () => ({
        tool: "generate_image",
        arguments: {
          model: "sandbox-image-pro",
          prompt: `pro ${next()}`,
          parameters: { resolution: next() < 0.5 ? "1K" : "2K" },
        },
      }),
      () => ({
        tool: "generate_video",
        arguments: {
          model: "sandbox-video-lite",
          prompt: `video ${next()}`,
          parameters: { mode: "text-to-video", duration: 5, ratio: "16:9" },
        },
      }),
    ];
    for (let round = 0; round < 6; round++) {
      const items = Array.from(
        { length: 1 + Math.floor(next() * 5) },
        () => kinds[Math.floor(next() * 3)]?.() ?? image("x"),
      );
      const maxGems = 5 + Math.floor(next() * 60);
      const r = await h.call("generate_batch", { items, maxGems, wait: 30 });
      const s = r.structuredContent as Batch;
      const where = JSON.stringify({ round, maxGems, items: s.items });
      const shares = s.items.reduce((n, i) => n + (i.maxGems ?? 0), 0);
      expect(shares, where).toBeLessThanOrEqual(maxGems);
      for (const item of s.items) {
        expect(item.maxGems ?? 0, where).toBeLessThanOrEqual(20);
        expect(item.task?.quotedGems ?? 0, where).toBeLessThanOrEqual(item.maxGems ?? 0);
      }
      expect(s.gems.charged, where).toBeLessThanOrEqual(maxGems);
    }
  });
});

describe("generate_batch's whole answer", () => {
  it("of a success: every item's identity, task, outputs and Gems, and the next step", async () => {
    await open();
    const r = await h.call("generate_batch", {
      items: [image("a red kite"), image("a blue kite")],
      maxGems: 10,
      idempotencyKey: "kites",
      wait: 20,
    });
    expect(formatAnswer(r)).toMatchInlineSnapshot(`
      "isError: false
      --- text
      Batch of 2 items, identity (idempotencyKey) kites: 2 accepted by the service, 0 refused.
      Gems: estimated about 4 Gems; ceiling 10 Gems for the whole, divided into each item's maxGems; quoted 4, charged so far 4 (the sum over the items' tasks).
      items[0] generate_image, identity kites.0, maxGems 5: task <id-1> succeeded; Gems quoted 2, charged 2, released 0.
        - #0 succeeded image/png, asset ID <id-2> (use it as sourceImage or endFrame, or in referenceAssetIds): http://sandbox.invalid/sandbox/files/<id-2>?exp=<sig-1>&sig=<sig-2> (resource generation://tasks/<id-1>/outputs/0)
      items[1] generate_image, identity kites.1, maxGems 5: task <id-3> succeeded; Gems quoted 2, charged 2, released 0.
        - #0 succeeded image/png, asset ID <id-4> (use it as sourceImage or endFrame, or in referenceAssetIds): http://sandbox.invalid/sandbox/files/<id-4>?exp=<sig-3>&sig=<sig-4> (resource generation://tasks/<id-3>/outputs/0)
      Keep the batch's identity: the same batch with idempotencyKey "kites" replays every item and never charges twice.
      Next: give the user the URLs above (they expire; poll_task returns fresh ones), or call save_outputs with each task ID.
      --- resource_link generation://tasks/<id-1>/outputs/0 (image/png)
      --- resource_link generation://tasks/<id-3>/outputs/0 (image/png)
      --- structuredContent
      {
        "idempotencyKey": "kites",
        "items": [
          {
            "index": 0,
            "tool": "generate_image",
            "identity": "kites.0",
            "maxGems": 5,
            "created": true,
            "task": {
              "id": "<id-1>",
              "status": "succeeded",
              "quotedGems": 2,
              "chargedGems": 2,
              "releasedGems": 0,
              "error": null,
              "outputs": [
                {
                  "index": 0,
                  "status": "succeeded",
                  "asset": {
                    "id": "<id-2>",
                    "kind": "image",
                    "mimeType": "image/png",
                    "url": "http://sandbox.invalid/sandbox/files/<id-2>?exp=<sig-1>&sig=<sig-2>"
                  }
                }
              ]
            }
          },
          {
            "index": 1,
            "tool": "generate_image",
            "identity": "kites.1",
            "maxGems": 5,
            "created": true,
            "task": {
              "id": "<id-3>",
              "status": "succeeded",
              "quotedGems": 2,
              "chargedGems": 2,
              "releasedGems": 0,
              "error": null,
              "outputs": [
                {
                  "index": 0,
                  "status": "succeeded",
                  "asset": {
                    "id": "<id-4>",
                    "kind": "image",
                    "mimeType": "image/png",
                    "url": "http://sandbox.invalid/sandbox/files/<id-4>?exp=<sig-3>&sig=<sig-4>"
                  }
                }
              ]
            }
          }
        ],
        "gems": {
          "estimated": 4,
          "ceiling": 10,
          "quoted": 4,
          "charged": 4
        },
        "next": "give the user the URLs above (they expire; poll_task returns fresh ones), or call save_outputs with each task ID"
      }
      "
    `);
  });

  it("of a refusal: every item's errors at once", async () => {
    await open();
    const r = await h.call("generate_batch", {
      items: [
        { tool: "generate_video", arguments: { model: "nope", prompt: "x" } },
        image("fine", { outputCount: 9 }),
      ],
    });
    expect(formatAnswer(r)).toMatchInlineSnapshot(`
      "isError: true
      --- text
      INVALID_ARGUMENT: 3 errors in the batch's items, so no item was sent: items[0].arguments.model: "nope" is not in the model catalog (video models in the catalog: sandbox-video-lite, sandbox-video-pro); items[0].arguments.parameters.mode: is required for video: text-to-video, or image-to-video with parameters.sourceImage; items[1].arguments.parameters.outputCount: must be at most 4. Next: Fix the named argument and call again; nothing was sent.
      "
    `);
  });
});
