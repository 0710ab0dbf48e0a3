/** GENERATION_HTTP_LIMITS (src/config/serve-limits.ts): name=value pairs, each refusal naming the field and the limit. */
import { describe, expect, it } from "vitest";
import { DEFAULT_SERVE_LIMITS, readServeLimits, serveLimits } from "../../src/config/serve-limits.js";

const F = "GENERATION_HTTP_LIMITS";

describe("GENERATION_HTTP_LIMITS", () => {
  it("reads pairs over the defaults", () => {
    const set = readServeLimits(" sessions=8000, sessionsPerKey=50 ,ledgerMiBPerKeyDay=10", F);
    expect(set).toEqual({ sessions: 8000, sessionsPerKey: 50, ledgerMiBPerKeyDay: 10 });
    expect(serveLimits(set)).toEqual({ ...DEFAULT_SERVE_LIMITS, ...set });
  });

  it("refuses an unknown name, a value that is not a positive integer, and a share above its total", () => {
    expect(() => readServeLimits("session=1", F)).toThrow(
      /GENERATION_HTTP_LIMITS: unknown limit 'session'; expected one of sessions,/,
    );
    expect(() => readServeLimits("sessions=0", F)).toThrow(/sessions must be an integer from 1 to 1000000/);
    expect(() => readServeLimits("sessions=1.5", F)).toThrow(/sessions must be an integer/);
    expect(() => readServeLimits("listens=10", F)).toThrow(/listensPerKey \(32\) exceeds listens \(10\)/);
  });
});
