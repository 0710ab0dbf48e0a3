/**
 * generate_batch's money invariant against the sandbox (random mixes under a random maxGems and
 * the operator's cap), and its whole answer (text, links and structuredContent) of a success and
 * of a refusal, inline; its behaviour is in batch.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { formatAnswer } from "./answer-format.js";
import { type Batch, imageItem } from "./batch-fixtures.js";
import { type Harness, type HarnessOptions, harness } from "./harness.js";

let h: Harness;
const open = async (o?: HarnessOptions) => {
  h = await harness(o);
  return h;
};
fakeTimeEach();
afterEach(() => h?.close());

const image = imageItem;

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
        - #0 succeeded image/png, asset ID <id-2> (use it as sourceImage or endFrame, or in referenceAssetIds): http://sandbox.invalid/sandbox/files/<id-2>?exp=<sig>&sig=<sig> (resource generation://tasks/<id-1>/outputs/0)
      items[1] generate_image, identity kites.1, maxGems 5: task <id-3> succeeded; Gems quoted 2, charged 2, released 0.
        - #0 succeeded image/png, asset ID <id-4> (use it as sourceImage or endFrame, or in referenceAssetIds): http://sandbox.invalid/sandbox/files/<id-4>?exp=<sig>&sig=<sig> (resource generation://tasks/<id-3>/outputs/0)
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
                    "url": "http://sandbox.invalid/sandbox/files/<id-2>?exp=<sig>&sig=<sig>"
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
                    "url": "http://sandbox.invalid/sandbox/files/<id-4>?exp=<sig>&sig=<sig>"
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
