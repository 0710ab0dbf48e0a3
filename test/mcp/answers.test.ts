/**
 * The requestState of a question: sealed by the SDK's HMAC codec under a key per API key, derived
 * from GENERATION_AUTH_SECRET (the same on every replica) or random per process. A state that does
 * not verify (forged, expired, another key's, another secret's) reads as no answer; an answer's
 * nonce is honoured once per process.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  ANSWER_TTL_SECONDS,
  type AskedState,
  answerCodec,
  answerKey,
  askedState,
  honourOnce,
  verifyAnswers,
} from "../../src/mcp/answers.js";

const state: AskedState = { tool: "generate_image", args: "a".repeat(64), asked: { spend: 16 }, nonce: "n1" };
const ctx = {} as never;
const secret = randomBytes(32).toString("base64");

afterEach(() => {
  vi.useRealTimers();
});

describe("answer states", () => {
  it("verify on another replica with the same GENERATION_AUTH_SECRET and key", async () => {
    const a = { keyHash: "k1", answerKey: answerKey([secret]) };
    const b = { keyHash: "k1", answerKey: answerKey([secret, randomBytes(32).toString("base64")]) };
    const minted = await answerCodec(a).mint(state);
    expect(askedState(await verifyAnswers(b)(minted, ctx))).toEqual(state);
  });

  it("do not verify under another secret, another API key, or a random per-process key", async () => {
    const minted = await answerCodec({ keyHash: "k1", answerKey: answerKey([secret]) }).mint(state);
    const other = randomBytes(32).toString("base64");
    for (const scope of [
      { keyHash: "k1", answerKey: answerKey([other]) },
      { keyHash: "k2", answerKey: answerKey([secret]) },
      { keyHash: "k1" },
    ]) {
      expect(askedState(await verifyAnswers(scope)(minted, ctx))).toBeUndefined();
    }
  });

  it("a random per-process key serves every engine of the process", async () => {
    expect(answerKey(undefined)).toBe(answerKey(undefined));
    const minted = await answerCodec({ keyHash: "k1" }).mint(state);
    expect(askedState(await verifyAnswers({ keyHash: "k1" })(minted, ctx))).toEqual(state);
  });

  it("forged or expired states read as no answer", async () => {
    const scope = { keyHash: "k3", answerKey: answerKey([secret]) };
    const minted = await answerCodec(scope).mint(state);
    const [v, body, mac] = minted.split(".");
    const payload = JSON.parse(Buffer.from(body ?? "", "base64url").toString());
    payload.p.asked.spend = 128;
    const forged = `${v}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${mac}`;
    expect(askedState(await verifyAnswers(scope)(forged, ctx))).toBeUndefined();
    expect(askedState(await verifyAnswers(scope)("v1.garbage", ctx))).toBeUndefined();
    vi.useFakeTimers({ now: Date.now() + (ANSWER_TTL_SECONDS + 2) * 1000 });
    expect(askedState(await verifyAnswers(scope)(minted, ctx))).toBeUndefined();
  });

  it("an answer's nonce is honoured once", () => {
    const nonce = randomBytes(8).toString("hex");
    expect(honourOnce(nonce)).toBe(true);
    expect(honourOnce(nonce)).toBe(false);
  });
});
