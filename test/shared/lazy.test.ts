/** The one deferred load (src/shared/lazy.ts): made once, shared, and tried again after a failure. */
import { describe, expect, it } from "vitest";
import { lazy } from "../../src/shared/lazy.js";

describe("lazy", () => {
  it("loads once however many callers ask, and not before the first", async () => {
    let loads = 0;
    const load = lazy(async () => ++loads);
    expect(loads).toBe(0);
    expect(await Promise.all([load(), load(), load()])).toEqual([1, 1, 1]);
    expect(await load()).toBe(1);
  });

  it("tries a failed load again on the next call", async () => {
    let tries = 0;
    const load = lazy(async () => {
      tries++;
      if (tries === 1) throw new Error("the disk was busy");
      return "loaded";
    });
    await expect(load()).rejects.toThrow("the disk was busy");
    expect(await load()).toBe("loaded");
    expect(tries).toBe(2);
  });
});
