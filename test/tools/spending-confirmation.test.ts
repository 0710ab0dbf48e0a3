/**
 * GENERATION_CONFIRM_ABOVE_GEMS through the tools: asked only above an estimate (every cost factor
 * the catalog publishes, named in the question) or a maxGems of the call's own; the amount asked
 * about is sent as maxGems, so a higher quote is refused with nothing charged; not asked, the
 * threshold is the ceiling; on 2026-07-28 the client's answer carries the question's state.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, type HarnessOptions, harness, structured, textOf } from "./harness.js";

const IMAGE = "POST /api/generate/image";

let h: Harness;
const open = async (o?: HarnessOptions) => {
  h = await harness(o);
  return h;
};
afterEach(() => h?.close());

describe("spending confirmation", () => {
  it("asks above the threshold with an honest estimate; declining sends nothing", async () => {
    await open({ config: { confirmAboveGems: 5 }, elicit: () => ({ action: "decline" }) });
    const r = await h.call("generate_image", { model: "sandbox-image-pro", prompt: "x", wait: 0 });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^USER_DECLINED: .*nothing was sent/);
    expect(h.elicited[0]).toMatch(/about 8 Gems \(the catalog's estimate: baseGems 8 × outputCount 1/);
    expect(h.elicited[0]).toMatch(/8 Gems is sent as the ceiling \(maxGems\)/);
    expect(h.sandbox.stats.dispatches()).toBe(0);
  });

  it("does not ask for chat, which has no estimate: the threshold is sent as maxGems, and the result says so", async () => {
    await open({ config: { confirmAboveGems: 5 }, elicit: () => ({ action: "decline" }) });
    const messages = [{ role: "user", content: "hi" }];
    const r = await h.call("chat", { model: "sandbox-chat-small", messages });
    expect(structured(r)).toMatchObject({ created: true });
    expect(textOf(r)).toMatch(
      /Sent with maxGems 5, your confirmation threshold \(GENERATION_CONFIRM_ABOVE_GEMS 5\)/,
    );
    expect(h.elicited).toEqual([]);
    // An explicit maxGems under the threshold is the caller's own ceiling: no note about the threshold.
    const own = await h.call("chat", { model: "sandbox-chat-small", messages, maxGems: 5 });
    expect(textOf(own)).not.toMatch(/confirmation threshold/);
    // One the conservative maximum exceeds is refused by the service, with nothing spent unasked.
    const big = await h.call("chat", { model: "sandbox-chat-small", messages, max_tokens: 8192 });
    expect(textOf(big)).toMatch(
      /^PRICE_CHANGED: [\s\S]*GENERATION_CONFIRM_ABOVE_GEMS \(5\), sent as maxGems/,
    );
    expect(h.elicited).toEqual([]);
  });

  it("an estimate under the threshold is sent as the ceiling, so a higher real quote is refused, not spent", async () => {
    await open({
      config: { confirmAboveGems: 10 },
      elicit: () => ({ action: "accept", content: { confirm: true } }),
    });
    // baseGems 8 estimates under 10 and no question is asked, but the service quotes twice that.
    h.sandbox.faults.inject(IMAGE, { kind: "reprice", factor: 2 });
    const r = await h.call("generate_image", { model: "sandbox-image-pro", prompt: "repriced", wait: 0 });
    expect(h.elicited.length).toBe(0);
    expect(textOf(r)).toMatch(/^PRICE_CHANGED: /);
    expect(textOf(r)).toMatch(
      /because the catalog's estimate \(about 8 Gems\) is under it; nothing was charged/,
    );
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(0);
    // At its catalog price the same call goes through under the threshold.
    structured(await h.call("generate_image", { model: "sandbox-image-pro", prompt: "small", wait: 0 }));
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(1);
  });

  it("estimates from every factor the catalog publishes, and the accepted amount is the ceiling", async () => {
    await open({
      config: { confirmAboveGems: 10 },
      elicit: () => ({ action: "accept", content: { confirm: true } }),
    });
    const args = {
      model: "sandbox-image-pro",
      prompt: "large",
      parameters: { resolution: "4K", outputCount: 4 },
    };
    const r = await h.call("generate_image", { ...args, wait: 0 });
    expect(h.elicited).toHaveLength(1);
    expect(h.elicited[0]).toMatch(
      /about 128 Gems \(the catalog's estimate: baseGems 8 × outputCount 4 × 4 for resolution 4K \(its resolutionMultipliers\)/,
    );
    const s = structured<{ task: { quotedGems: number } }>(r);
    expect(s.task.quotedGems).toBe(128);
    expect(textOf(r)).toMatch(/Sent with maxGems 128, the most the user accepted/);
    // A quote above what was accepted is refused, and says so.
    h.sandbox.faults.inject(IMAGE, { kind: "reprice", factor: 1.5 });
    const over = await h.call("generate_image", { ...args, prompt: "larger", wait: 0 });
    expect(textOf(over)).toMatch(/^PRICE_CHANGED: .*The quote is 192 Gems, above maxGems 128/);
    expect(textOf(over)).toMatch(
      /The quote was above the 128 Gems the user accepted, sent as maxGems; nothing was charged/,
    );
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(1);
  });

  it("on 2026-07-28 too: the client echoes the question's state with its yes, and the call goes through once", async () => {
    await open({
      modern: true,
      config: { confirmAboveGems: 10 },
      elicit: () => ({ action: "accept", content: { confirm: true } }),
    });
    const r = await h.call("generate_image", {
      model: "sandbox-image-pro",
      prompt: "modern",
      parameters: { resolution: "2K", outputCount: 2 },
      wait: 0,
    });
    expect(h.elicited).toHaveLength(1);
    expect(h.elicited[0]).toMatch(/about 32 Gems/);
    expect(structured<{ task: { quotedGems: number } }>(r).task.quotedGems).toBe(32);
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(1);
  });

  it("an estimate above GENERATION_MAX_GEMS is refused before any question: the cap is no default", async () => {
    await open({
      config: { confirmAboveGems: 10, maxGems: 20 },
      elicit: () => ({ action: "accept", content: { confirm: true } }),
    });
    const r = await h.call("generate_image", {
      model: "sandbox-image-pro",
      prompt: "capped",
      parameters: { resolution: "2K", outputCount: 2 },
      wait: 0,
    });
    expect(textOf(r)).toMatch(/^INVALID_ARGUMENT: .*above the operator's cap of 20 Gems per request/);
    expect(h.elicited).toEqual([]);
    expect(h.sandbox.stats.requests(IMAGE)).toBe(0);
  });

  it("submits once the user accepts, and does not ask when maxGems keeps it under the threshold", async () => {
    await open({
      config: { confirmAboveGems: 5 },
      elicit: () => ({ action: "accept", content: { confirm: true } }),
    });
    structured(await h.call("generate_image", { model: "sandbox-image-pro", prompt: "x", wait: 0 }));
    expect(h.elicited.length).toBe(1);
    expect(h.sandbox.stats.dispatches(IMAGE)).toBe(1);
    structured(await h.call("generate_image", { model: "sandbox-image-fast", prompt: "cheap", wait: 0 }));
    const capped = await h.call("generate_image", {
      model: "sandbox-image-pro",
      prompt: "capped",
      maxGems: 5,
      wait: 0,
    });
    expect(h.elicited.length).toBe(1);
    // The ceiling is below the quote: the service refuses rather than overspending.
    expect(textOf(capped)).toMatch(/^PRICE_CHANGED: /);
  });
});
