/** An item's identity derived from its batch's (src/calls/paid/batch-steps.ts): stable, and always within the service's pattern. */
import { describe, expect, it } from "vitest";
import { itemIdentity } from "../../../src/calls/paid/batch-steps.js";
import { LIMITS } from "../../../src/config/service-limits.js";

describe("an item's identity", () => {
  it("is <batch>.<index> where that fits the pattern", () => {
    expect(itemIdentity("story-1", 0)).toBe("story-1.0");
    expect(itemIdentity("gm-abc-0123", 9)).toBe("gm-abc-0123.9");
  });

  it("is a hash of the batch's identity where <batch>.<index> would pass 128 characters: same batch, same identities", () => {
    const long = "k".repeat(128);
    const ids = [0, 1, 9].map((i) => itemIdentity(long, i));
    for (const id of ids) expect(id).toMatch(LIMITS.idempotencyKeyPattern);
    expect(new Set(ids).size).toBe(3);
    expect(itemIdentity(long, 1)).toBe(ids[1]);
    expect(itemIdentity(`${"k".repeat(127)}j`, 1)).not.toBe(ids[1]);
  });
});
