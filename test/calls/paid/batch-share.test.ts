/**
 * The money invariant of a batch's ceiling (src/calls/paid/batch-share.ts): for random mixes of the
 * sandbox catalog's models, resolutions and output counts, totals, caps and items' own maxGems,
 * the items' maxGems never sum above the total, none is above the cap or its own maxGems, and
 * the shares use the total where the bounds allow.
 */
import { describe, expect, it } from "vitest";
import { divideCeiling, type ShareItem } from "../../../src/calls/paid/batch-share.js";
import { estimateFrom } from "../../../src/calls/paid/estimate.js";
import type { Model } from "../../../src/client/schemas.js";
import { LIMITS } from "../../../src/config/service-limits.js";
import { MODELS } from "../../../src/sandbox/model-catalog.js";

/** A small seeded generator (mulberry32), so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const media = MODELS.filter((m) => m.kind !== "text") as unknown as Model[];

function randomItem(r: () => number): ShareItem {
  const m = media[Math.floor(r() * media.length)] as Model;
  const resolutions = (m.capabilities.resolutions as string[] | undefined) ?? [];
  const parameters: Record<string, unknown> = {
    outputCount: 1 + Math.floor(r() * 4),
    ...(resolutions.length > 0 ? { resolution: resolutions[Math.floor(r() * resolutions.length)] } : {}),
  };
  const given = r() < 0.2 ? Math.floor(r() * 40) : undefined;
  return { estimate: estimateFrom(m, parameters)?.gems, given };
}

describe("a batch's ceiling divided among its items", () => {
  it("never sums above the total, nor gives an item more than the cap or its own maxGems (2,000 random mixes)", () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const r = random(seed);
      const items = Array.from({ length: 1 + Math.floor(r() * 10) }, () => randomItem(r));
      const total = r() < 0.1 ? undefined : Math.floor(r() * 200);
      const cap = r() < 0.5 ? undefined : 1 + Math.floor(r() * 50);
      const shares = divideCeiling(items, { total, cap, limit: LIMITS.mediaMaxGems });
      const where = `seed ${seed}: ${JSON.stringify({ items, total, cap, shares })}`;
      expect(shares.length, where).toBe(items.length);
      if (total !== undefined) {
        const sum = shares.reduce<number>((a, s) => a + (s ?? 0), 0);
        expect(sum, where).toBeLessThanOrEqual(total);
        expect(
          shares.every((s) => s !== undefined && Number.isInteger(s) && s >= 0),
          where,
        ).toBe(true);
        // An item with no bound takes what the others leave: no Gem of the total goes unused.
        const absorbs = items.some((it) => it.given === undefined && cap === undefined);
        if (absorbs) expect(sum, where).toBe(total);
      }
      items.forEach((it, i) => {
        const s = shares[i];
        if (cap !== undefined) expect(s, where).toBeLessThanOrEqual(cap);
        if (it.given !== undefined) expect(s, where).toBeLessThanOrEqual(it.given);
      });
    }
  });

  it("shares in proportion to the estimates, and equally what is left among items without one", () => {
    const limits = { cap: undefined, limit: LIMITS.mediaMaxGems };
    expect(
      divideCeiling(
        [
          { estimate: 2, given: undefined },
          { estimate: 6, given: undefined },
        ],
        { ...limits, total: 16 },
      ),
    ).toEqual([4, 12]);
    expect(
      divideCeiling(
        [
          { estimate: 2, given: undefined },
          { estimate: undefined, given: undefined },
          { estimate: undefined, given: undefined },
        ],
        { ...limits, total: 12 },
      ),
    ).toEqual([2, 5, 5]);
    // Estimates above the total: scaled down, nothing left for the others.
    expect(
      divideCeiling(
        [
          { estimate: 20, given: undefined },
          { estimate: undefined, given: undefined },
        ],
        { ...limits, total: 10 },
      ),
    ).toEqual([10, 0]);
    // No total: each item gets the cap, or none.
    expect(
      divideCeiling(
        [
          { estimate: 2, given: undefined },
          { estimate: 2, given: 1 },
        ],
        { total: undefined, cap: 5, limit: 9 },
      ),
    ).toEqual([5, 1]);
    expect(
      divideCeiling([{ estimate: 2, given: undefined }], { total: undefined, cap: undefined, limit: 9 }),
    ).toEqual([undefined]);
  });
});
