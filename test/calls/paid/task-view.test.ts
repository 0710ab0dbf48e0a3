import { describe, expect, it } from "vitest";
import {
  extensionFor,
  imagePreviews,
  PREVIEW_BUDGET_BYTES,
  taskText,
} from "../../../src/calls/paid/task-view.js";
import type { Task } from "../../../src/client/schemas.js";
import { OutputTooLargeError } from "../../../src/client/service-errors.js";
import type { Engine } from "../../../src/mcp/context.js";

const task = (status: string, outputs: Task["outputs"], error: Task["error"] = null): Task => ({
  id: "task_1",
  status,
  quotedGems: 10,
  chargedGems: status === "failed" ? 0 : 10,
  releasedGems: status === "failed" ? 10 : 0,
  error,
  outputs,
});
const image = (index: number, status = "succeeded") => ({
  index,
  status,
  asset: {
    id: `a${index}`,
    kind: "image",
    mimeType: "image/png",
    url: `https://files.example/${index}?sig=x`,
  },
});

/** An engine whose only service call is fetchOutput, serving images of the given sizes. */
function engineServing(sizes: number[]): Engine {
  return {
    client: {
      async fetchOutput(url: string, o: { maxBytes?: number }) {
        const size = sizes[Number(new URL(url).pathname.slice(1))] ?? 0;
        if (o.maxBytes !== undefined && size > o.maxBytes) {
          throw new OutputTooLargeError({ status: 200, message: `the output is ${size} bytes` }, o.maxBytes);
        }
        return { bytes: new Uint8Array(size), mimeType: "image/png" };
      },
    },
  } as unknown as Engine;
}

describe("task presentation", () => {
  it("inlines finished images only within the budget and says which were left out", async () => {
    const big = Math.floor(PREVIEW_BUDGET_BYTES * 0.6);
    const t = task("succeeded", [image(0), image(1), image(2)]);
    const { blocks, notes } = await imagePreviews(
      engineServing([big, big, 1000]),
      t,
      new AbortController().signal,
    );
    expect(blocks.map((b) => b.type)).toEqual(["image", "image"]);
    expect(notes).toEqual([expect.stringMatching(/^Preview of #1 left out \(OUTPUT_TOO_LARGE\)/)]);
    const running = await imagePreviews(
      engineServing([10]),
      task("processing", [image(0)]),
      new AbortController().signal,
    );
    expect(running.blocks).toEqual([]);
  });

  it("says what to do next for each state", () => {
    const wait = { wait: 45 };
    expect(taskText(task("queued", []), wait)).toMatch(
      /call poll_task with \{"taskId": "task_1", "wait": 45\}/,
    );
    const partial = taskText(task("partial", [image(0), { index: 1, status: "failed", asset: null }]), wait);
    expect(partial).toContain("Succeeded: #0. Failed: #1.");
    expect(partial).toContain("https://files.example/0?sig=x");
    const failed = taskText(task("failed", [], { code: "MODERATION", message: "refused" }), wait);
    expect(failed).toMatch(/Gems: quoted 10, charged 0, released 10/);
    expect(failed).toMatch(/stop polling and tell the user why \(MODERATION: refused\)/);
    expect(taskText(task("succeeded", [image(0), image(1)]), wait)).toContain(
      "Succeeded: #0, #1. Failed: none.",
    );
    expect(taskText(task("succeeded", [image(0)]), { ...wait, identity: "gm-1", created: false })).toMatch(
      /Identity \(idempotencyKey\): gm-1\. It continues an earlier request under the same identity: not charged twice/,
    );
  });

  it("names output files by type", () => {
    expect(extensionFor("image/png")).toBe("png");
    expect(extensionFor("image/jpeg")).toBe("jpg");
    expect(extensionFor("audio/mpeg")).toBe("mp3");
    expect(extensionFor("video/mp4")).toBe("mp4");
    expect(extensionFor("audio/x-flac")).toBe("flac");
    expect(extensionFor("weird")).toBe("bin");
  });
});
