/**
 * The operator's cap and approval without a dialog, through the tools (in-process client, the
 * sandbox's received bodies checked):
 * - GENERATION_MAX_GEMS is hard: no body carries a higher maxGems, whatever the call names or the
 *   user accepts; an estimate above it is refused before anything is sent or recorded;
 * - a client without elicitation gets a quote (nothing sent) with an approval token; the same call
 *   with the token is sent with maxGems at most the amount; a token is bound to its call and used once;
 * - a client that declares elicitation and never answers gets the quote within the bound.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { QUESTION_ANSWER_MS } from "../../src/config/time-limits.js";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, type HarnessOptions, harness, structured, textOf } from "./harness.js";

const IMAGE = "POST /api/generate/image";
const pro = { model: "sandbox-image-pro", prompt: "a heron", wait: 0 };
type Quote = { approval: { token: string; gems: number; tell: string; next: string } };

let h: Harness;
const open = async (o?: HarnessOptions) => {
  h = await harness(o);
  return h;
};
fakeTimeEach();
afterEach(() => h?.close());

/** Every maxGems the service received. */
const sentCeilings = () => h.bodies.map((b) => b.body.maxGems);

describe("the operator's cap (GENERATION_MAX_GEMS)", () => {
  it("lowers a call's larger maxGems to the cap and sends the cap where the call names none", async () => {
    await open({ config: { maxGems: 20 } });
    const r = await h.call("generate_image", { ...pro, maxGems: 1_000 });
    structured(r);
    expect(textOf(r)).toMatch(
      /Sent with maxGems 20, the operator's cap per request \(GENERATION_MAX_GEMS\) \(the call's maxGems 1000 was lowered to it\)/,
    );
    structured(await h.call("generate_image", { ...pro, prompt: "no ceiling named" }));
    structured(await h.call("generate_image", { ...pro, prompt: "own", maxGems: 9 }));
    expect(sentCeilings()).toEqual([20, 20, 9]);
  });

  it("refuses a call whose estimate is above the cap: nothing sent, no record, no question", async () => {
    await open({
      config: { maxGems: 20, confirmAboveGems: 10 },
      elicit: () => ({ action: "accept", content: { confirm: true } }),
    });
    const r = await h.call("generate_image", { ...pro, parameters: { resolution: "2K", outputCount: 2 } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(
      /^INVALID_ARGUMENT: .*about 32 Gems .*above the operator's cap of 20 Gems per request \(GENERATION_MAX_GEMS\); nothing was sent/,
    );
    expect(h.elicited).toEqual([]);
    expect(h.sandbox.stats.requests(IMAGE)).toBe(0);
    expect(await h.ledger.list(h.engine.keyHash)).toEqual([]);
  });

  it("a yes for more than the cap still sends the cap", async () => {
    await open({
      config: { maxGems: 20, confirmAboveGems: 10 },
      elicit: () => ({ action: "accept", content: { confirm: true } }),
    });
    const r = await h.call("generate_image", { ...pro, parameters: { resolution: "2K" }, maxGems: 500 });
    expect(h.elicited[0]).toMatch(
      /up to 500 Gems .*The operator's cap \(GENERATION_MAX_GEMS\) lowers the ceiling to 20 Gems/,
    );
    expect(structured<{ task: { quotedGems: number } }>(r).task.quotedGems).toBe(16);
    expect(sentCeilings()).toEqual([20]);
  });
});

/** A quote's answer, checked: not an error, nothing sent, the token in text and structuredContent. */
function quoteOf(r: Awaited<ReturnType<Harness["call"]>>): Quote {
  const s = structured<Quote>(r);
  expect(textOf(r)).toMatch(/^QUOTE: nothing was sent/);
  expect(textOf(r)).toContain(s.approval.token);
  return s;
}

describe("a quote and its approval, for a client that cannot ask", () => {
  const args = { ...pro, parameters: { resolution: "4K", outputCount: 2 } };

  it("quotes instead of sending, then sends the approved call once with maxGems at most the amount", async () => {
    await open({ config: { confirmAboveGems: 10 } });
    const q = quoteOf(await h.call("generate_image", args));
    expect(q.approval.gems).toBe(64);
    expect(q.approval.tell).toMatch(/about 64 Gems .*baseGems 8 × outputCount 2 × 4 for resolution 4K/);
    expect(h.sandbox.stats.requests(IMAGE)).toBe(0);
    expect(await h.ledger.list(h.engine.keyHash)).toEqual([]);
    const r = await h.call("generate_image", { ...args, approval: q.approval.token });
    expect(structured<{ task: { quotedGems: number } }>(r).task.quotedGems).toBe(64);
    expect(textOf(r)).toMatch(/Sent with maxGems 64, the amount the user approved/);
    expect(sentCeilings()).toEqual([64]);
    // Used once: the same token again sends nothing.
    const again = await h.call("generate_image", { ...args, approval: q.approval.token });
    expect(textOf(again)).toMatch(/^INVALID_ARGUMENT: approval: this approval was already used/);
    expect(h.sandbox.stats.requests(IMAGE)).toBe(1);
  });

  it("refuses a token for changed arguments, another tool, forged or expired, naming why; nothing sent", async () => {
    await open({ config: { confirmAboveGems: 10 } });
    const { token } = quoteOf(await h.call("generate_image", args)).approval;
    const changed = await h.call("generate_image", { ...args, prompt: "another heron", approval: token });
    expect(textOf(changed)).toMatch(/^INVALID_ARGUMENT: approval: the arguments differ/);
    const video = {
      model: "sandbox-video-lite",
      prompt: "a heron",
      parameters: { mode: "text-to-video", duration: 5, ratio: "16:9" },
      wait: 0,
    };
    const other = await h.call("generate_video", { ...video, approval: token });
    expect(textOf(other)).toMatch(
      /^INVALID_ARGUMENT: approval: this approval is for generate_image, not generate_video/,
    );
    // The amount raised in the readable claims: the signature no longer verifies.
    const [header = "", body = "", signature = ""] = token.split(".");
    const claims = JSON.parse(Buffer.from(body, "base64url").toString());
    const raised = `${header}.${Buffer.from(JSON.stringify({ ...claims, gems: 10_000 })).toString("base64url")}.${signature}`;
    const forged = await h.call("generate_image", { ...args, approval: raised });
    expect(textOf(forged)).toMatch(/^INVALID_ARGUMENT: approval: the token does not verify/);
    const junk = await h.call("generate_image", { ...args, approval: "not-a-token" });
    expect(textOf(junk)).toMatch(/^INVALID_ARGUMENT: approval: not a token this server issued/);
    const long = await h.call("generate_image", { ...args, approval: "x".repeat(600) });
    expect(textOf(long)).toMatch(/^INVALID_ARGUMENT: approval: longer than the 512 characters/);
    vi.advanceTimersByTime(15 * 60 * 1000 + 1);
    const late = await h.call("generate_image", { ...args, approval: token });
    expect(textOf(late)).toMatch(/^INVALID_ARGUMENT: approval: this approval expired at /);
    expect(h.sandbox.stats.requests()).toBeGreaterThanOrEqual(0);
    expect(h.bodies).toEqual([]);
    expect(await h.ledger.list(h.engine.keyHash)).toEqual([]);
  });

  it("quotes a call's own maxGems above the threshold where there is no estimate (video), and the approval sends at most it", async () => {
    await open({ config: { confirmAboveGems: 1 } });
    const video = {
      model: "sandbox-video-lite",
      prompt: "waves",
      parameters: { mode: "text-to-video", duration: 5, ratio: "16:9" },
      wait: 0,
      maxGems: 40,
    };
    const q = quoteOf(await h.call("generate_video", video));
    expect(q.approval.gems).toBe(40);
    structured(await h.call("generate_video", { ...video, approval: q.approval.token }));
    expect(sentCeilings()).toEqual([40]);
  });

  it("chat: a maxGems above the threshold is quoted, and the approved call is sent under it", async () => {
    await open({ config: { confirmAboveGems: 1 } });
    const chat = { model: "sandbox-chat-small", messages: [{ role: "user", content: "hi" }], maxGems: 30 };
    const q = quoteOf(await h.call("chat", chat));
    expect(q.approval.gems).toBe(30);
    structured(await h.call("chat", { ...chat, approval: q.approval.token }));
    expect(sentCeilings()).toEqual([30]);
  });

  it("a PRICE_CHANGED under the threshold names the way up: a higher maxGems, quoted with an approval token", async () => {
    await open({ config: { confirmAboveGems: 1 } });
    const video = {
      model: "sandbox-video-lite",
      prompt: "waves",
      parameters: { mode: "text-to-video", duration: 5, ratio: "16:9" },
      wait: 0,
    };
    const r = await h.call("generate_video", video);
    expect(textOf(r)).toMatch(/^PRICE_CHANGED: /);
    expect(textOf(r)).toMatch(
      /Next: to spend more than GENERATION_CONFIRM_ABOVE_GEMS, call again without approval and with maxGems set to the most the user may spend: .*a quote with an approval token/,
    );
    expect(sentCeilings()).toEqual([1]);
  });
});

describe("an approval beside another question", () => {
  it("on 2026-07-28, a roots round first: the token is used by the round that sends, once", async () => {
    await open({ modern: true, config: { confirmAboveGems: 10 }, roots: (dir) => [`${dir}/files`] });
    const args = { ...pro, parameters: { resolution: "2K", outputCount: 2 }, save: true };
    const q = quoteOf(await h.call("generate_image", args));
    const r = await h.call("generate_image", { ...args, approval: q.approval.token });
    expect(structured<{ task: { quotedGems: number } }>(r).task.quotedGems).toBe(32);
    expect(sentCeilings()).toEqual([32]);
  });
});

describe("a client that declares elicitation and never answers", () => {
  it("gets the quote once the bound passes; nothing is sent, and the late answer changes nothing", async () => {
    let answer: ((a: { action: "accept"; content: { confirm: boolean } }) => void) | undefined;
    await open({
      config: { confirmAboveGems: 10 },
      elicit: () =>
        new Promise((resolve) => {
          answer = resolve;
        }),
    });
    const started = Date.now();
    const r = await h.call("generate_image", { ...pro, parameters: { resolution: "2K", outputCount: 2 } });
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(QUESTION_ANSWER_MS);
    expect(waited).toBeLessThan(QUESTION_ANSWER_MS + 5_000);
    const q = quoteOf(r);
    expect(textOf(r)).toMatch(/the user did not answer the question in time/);
    expect(q.approval.gems).toBe(32);
    expect(h.elicited).toHaveLength(1);
    answer?.({ action: "accept", content: { confirm: true } });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(h.bodies).toEqual([]);
    // The quote's token works like any other.
    const ok = await h.call("generate_image", {
      ...pro,
      parameters: { resolution: "2K", outputCount: 2 },
      approval: q.approval.token,
    });
    expect(structured<{ task: { quotedGems: number } }>(ok).task.quotedGems).toBe(32);
    expect(sentCeilings()).toEqual([32]);
  });
});
