/**
 * A paid body is prepared before spending is confirmed (its fields checked, in canonical form) and
 * built once under the ceiling: the bytes are exactly the canonical JSON of the whole body, and
 * whatever building would refuse is refused by preparing, before any question.
 */
import { describe, expect, it } from "vitest";
import {
  buildUnder,
  canonicalJson,
  prepareChatBody,
  prepareExtractBody,
  prepareMediaBody,
} from "../../src/client/requests.js";
import { LIMITS } from "../../src/config/service-limits.js";
import { refusedArgument } from "../helpers/refusals.js";

describe("prepare, then build once under the ceiling", () => {
  const media = {
    prompt: "a lighthouse",
    model: "m",
    parameters: { ratio: "1:1", outputCount: 2, seed: 7 },
    referenceAssetIds: ["a1"],
  };

  it("the bytes under any ceiling are the canonical JSON of the whole body", () => {
    const p = prepareMediaBody("image", media);
    for (const maxGems of [undefined, 0, 5, 1_000_000_000]) {
      const built = buildUnder(p, maxGems);
      const whole = { ...media, ...(maxGems === undefined ? {} : { maxGems }) };
      expect(built.bytes).toBe(canonicalJson(whole));
      expect(built.body).toEqual(whole);
    }
    const chat = { model: "text-1", messages: [{ role: "user" as const, content: "hi" }], stream: true };
    expect(buildUnder(prepareChatBody(chat), 40).bytes).toBe(canonicalJson({ ...chat, maxGems: 40 }));
    const analysis = { model: "x", videoAssetId: "v1", prompt: "what happens" };
    expect(buildUnder(prepareExtractBody(analysis), 9).bytes).toBe(
      canonicalJson({ ...analysis, maxGems: 9 }),
    );
  });

  it("preparing builds nothing: the prepared body has no ceiling, and one preparation serves any ceiling", () => {
    const p = prepareMediaBody("audio", { model: "service-voice", prompt: "hi", operation: "speech" });
    expect(p.body).not.toHaveProperty("maxGems");
    expect(buildUnder(p, 3).bytes).not.toBe(buildUnder(p, 4).bytes);
    expect(buildUnder(p, 3).bytes).toBe(buildUnder(p, 3).bytes);
  });

  it("what building would refuse is refused when preparing, naming the field", () => {
    refusedArgument(
      () => prepareMediaBody("image", { ...media, parameters: { seed: Number.POSITIVE_INFINITY } }),
      "parameters.seed",
      /finite/,
    );
    refusedArgument(
      () => prepareMediaBody("image", { ...media, parameters: { when: new Date(0) } }),
      "parameters.when",
      /plain JSON object/,
    );
  });

  it("a body that would pass its size limit under the largest ceiling is refused when preparing", () => {
    const over = LIMITS.extraction.requestBytes;
    refusedArgument(
      () => prepareExtractBody({ model: "x", videoAssetId: "v1", prompt: "p".repeat(over) }),
      "(request)",
      /at most 16,000 bytes/,
    );
    // Just under the limit with no ceiling, over it with the largest: refused before any question.
    const bare = canonicalJson({ model: "x", videoAssetId: "v1", prompt: "" }).length;
    const ceiling = `,"maxGems":${LIMITS.textMaxGems}`.length;
    const prompt = "p".repeat(over - bare - ceiling + 1);
    expect(canonicalJson({ model: "x", videoAssetId: "v1", prompt }).length).toBeLessThan(over);
    refusedArgument(() => prepareExtractBody({ model: "x", videoAssetId: "v1", prompt }), "(request)");
    expect(() =>
      prepareExtractBody({ model: "x", videoAssetId: "v1", prompt: prompt.slice(1) }),
    ).not.toThrow();
  });
});
