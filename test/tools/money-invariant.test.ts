/**
 * The money invariant over the sandbox's catalog, for a host that cannot ask: for every image
 * model, resolution and output count (one, and the most the model makes), and every video model
 * and resolution with a maxGems of the call's own, a call either is refused above the operator's
 * cap (nothing sent) or is quoted, and its approved repeat is sent with a maxGems no higher than
 * the approved amount nor the cap, and charged no more than either.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MODELS } from "../../src/sandbox/model-catalog.js";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, harness, structured, textOf } from "./harness.js";

const CAP = 100;
type Task = { id: string; status: string; chargedGems?: number | null; quotedGems?: number | null };

let h: Harness;
fakeTimeEach();
afterEach(() => h?.close());

/** The task once terminal (poll_task until it is). */
async function finished(task: Task): Promise<Task> {
  let t = task;
  for (let i = 0; i < 20 && !["succeeded", "partial", "failed", "cancelled"].includes(t.status); i++) {
    t = structured<{ task: Task }>(await h.call("poll_task", { taskId: t.id, wait: 30 })).task;
  }
  return t;
}

/** One call through quote and approval; what was approved, sent and charged (or its refusal). */
async function approvedRun(tool: string, args: Record<string, unknown>, label: string) {
  const sentBefore = h.bodies.length;
  const q = await h.call(tool, args);
  if (q.isError) {
    expect(textOf(q), label).toMatch(/^INVALID_ARGUMENT: .*above the operator's cap/);
    expect(h.bodies.length, label).toBe(sentBefore);
    return "refused" as const;
  }
  const { approval } = structured<{ approval: { token: string; gems: number } }>(q);
  expect(approval.gems, label).toBeLessThanOrEqual(CAP);
  expect(h.bodies.length, label).toBe(sentBefore);
  const r = await h.call(tool, { ...args, approval: approval.token });
  const sent = h.bodies.slice(sentBefore).map((b) => b.body.maxGems as number);
  expect(sent, label).toHaveLength(1);
  expect(sent[0], label).toBeLessThanOrEqual(Math.min(approval.gems, CAP));
  if (r.isError) {
    // Only a refusal of the service's (a quote above the ceiling): nothing charged.
    expect(textOf(r), label).toMatch(/^PRICE_CHANGED: /);
    return "priced-out" as const;
  }
  const task = await finished(structured<{ task: Task }>(r).task);
  expect(task.chargedGems ?? 0, label).toBeLessThanOrEqual(Math.min(approval.gems, CAP));
  return "charged" as const;
}

describe("the charge never exceeds the approved amount nor the cap (every model of the sandbox)", () => {
  it("image: every model, resolution and output count", async () => {
    h = await harness({ config: { confirmAboveGems: 1, maxGems: CAP } });
    const sourceImage = (await h.uploadReady({ data: PNG, mimeType: "image/png" })).id;
    const outcomes: string[] = [];
    for (const m of MODELS.filter((x) => x.kind === "image" && x.available !== false)) {
      const resolutions = (m.capabilities.resolutions as string[] | undefined) ?? [];
      const most = (m.capabilities.maxOutputs as number | undefined) ?? 1;
      for (const resolution of resolutions) {
        for (const outputCount of [...new Set([1, most])]) {
          const parameters: Record<string, unknown> = { resolution, outputCount };
          if (m.capabilities.requiresSourceImage === true) parameters.sourceImage = sourceImage;
          const args = { model: m.id, prompt: `${m.id} ${resolution} x${outputCount}`, parameters, wait: 0 };
          outcomes.push(await approvedRun("generate_image", args, `${m.id} ${resolution} x${outputCount}`));
        }
      }
    }
    // fast (1K x1, x4), pro (1K/2K/4K x1, x4), edit (1K x1, x2): pro 4K x4 (128) is above the
    // cap, the rest are quoted and charged.
    expect(outcomes.filter((o) => o === "refused")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "charged")).toHaveLength(9);
  }, 120_000);

  it("video: every model and resolution, with a maxGems of the call's own above the cap", async () => {
    h = await harness({ config: { confirmAboveGems: 1, maxGems: CAP } });
    const outcomes: string[] = [];
    for (const m of MODELS.filter((x) => x.kind === "video" && x.available !== false)) {
      const durations = (m.capabilities.durations as number[] | undefined) ?? [];
      for (const resolution of (m.capabilities.resolutions as string[] | undefined) ?? []) {
        const parameters = { mode: "text-to-video", duration: durations[0], ratio: "16:9", resolution };
        const args = { model: m.id, prompt: `${m.id} ${resolution}`, parameters, maxGems: 5_000, wait: 0 };
        outcomes.push(await approvedRun("generate_video", args, `${m.id} ${resolution}`));
      }
    }
    // lite 720p, pro 720p charged; pro 1080p quoted above the cap by the service: refused, nothing charged.
    expect(outcomes).toEqual(["charged", "charged", "priced-out"]);
  }, 120_000);
});

/** A 1×1 PNG. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
