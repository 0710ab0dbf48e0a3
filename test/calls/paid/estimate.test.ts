/**
 * An estimate uses every cost factor the catalog entry publishes (baseGems, outputCount, each
 * `<parameter>Multipliers` table) and names each; an entry without baseGems has none.
 */
import { describe, expect, it } from "vitest";
import { estimateFrom, priceHint } from "../../../src/calls/paid/estimate.js";
import type { Model } from "../../../src/client/schemas.js";
import { publicCatalog } from "../../../src/sandbox/model-catalog.js";

const catalog = publicCatalog().models as Model[];
const entry = (id: string): Model => {
  const m = catalog.find((x) => x.id === id);
  if (m === undefined) throw new Error(`no ${id} in the sandbox catalog`);
  return m;
};

describe("estimateFrom", () => {
  it("multiplies baseGems, outputCount and the resolution's multiplier, naming each", () => {
    const e = estimateFrom(entry("sandbox-image-pro"), { resolution: "4K", outputCount: 4 });
    expect(e).toEqual({
      gems: 128,
      factors: ["baseGems 8", "outputCount 4", "4 for resolution 4K (its resolutionMultipliers)"],
    });
  });

  it("takes the model's first listed value when the call gives none, and says so", () => {
    const e = estimateFrom(entry("sandbox-image-pro"), {});
    expect(e?.gems).toBe(8);
    expect(e?.factors[2]).toBe(
      "1 for resolution 1K (its resolutionMultipliers; none given, so the model's first listed resolution)",
    );
  });

  it("a model without multipliers: baseGems × outputCount", () => {
    expect(estimateFrom(entry("sandbox-image-fast"), { outputCount: 3 })).toEqual({
      gems: 6,
      factors: ["baseGems 2", "outputCount 3"],
    });
  });

  it("no baseGems, no estimate (video, audio and text entries publish none)", () => {
    for (const id of ["sandbox-video-pro", "service-voice", "sandbox-music", "sandbox-chat-small"]) {
      expect(estimateFrom(entry(id), { duration: 8 }), id).toBeUndefined();
    }
  });

  it("reads any <parameter>Multipliers table, and takes its highest where the value has no entry", () => {
    const m: Model = {
      id: "priced-video",
      name: "A video model with a published price",
      kind: "video",
      baseGems: 3,
      capabilities: {
        durations: [4, 8],
        durationMultipliers: { "4": 4, "8": 8 },
        resolutionMultipliers: { "720p": 1, "1080p": 2.5 },
      },
    };
    expect(estimateFrom(m, { duration: 8, resolution: "720p" })?.gems).toBe(24);
    const none = estimateFrom(m, {});
    // duration: the first listed (4); resolution: no list, so the highest (2.5); 3 × 4 × 2.5 = 30.
    expect(none?.gems).toBe(30);
    expect(none?.factors).toContain(
      "2.5 for resolution (its resolutionMultipliers; none given, so its highest)",
    );
    expect(estimateFrom(m, { duration: 6, resolution: "4K" })?.factors).toEqual([
      "baseGems 3",
      "outputCount 1",
      "8 for duration 6 (its durationMultipliers; 6 is not in it, so its highest)",
      "2.5 for resolution 4K (its resolutionMultipliers; 4K is not in it, so its highest)",
    ]);
  });
});

describe("priceHint", () => {
  it("says the base price and every published multiplier, as list_models shows them", () => {
    expect(priceHint(entry("sandbox-image-pro"))).toBe(
      "about 8 Gems each (resolution: ×1 at 1K, ×2 at 2K, ×4 at 4K)",
    );
    expect(priceHint(entry("sandbox-image-legacy"))).toBe("about 1 Gem each");
    expect(priceHint(entry("sandbox-video-pro"))).toBeUndefined();
  });
});
