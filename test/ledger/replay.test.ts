import { describe, expect, it } from "vitest";
import { ConnectionError, IncompleteStreamError } from "../../src/client/service-errors.js";
import { backoffDelay, DEFAULT_BACKOFF, verdict } from "../../src/ledger/replay.js";
import { ArgumentError } from "../../src/shared/local-refusals.js";
import { serviceError } from "./ledger-helpers.js";

const max = () => 0.999999;

describe("verdict: acts on the client's classification", () => {
  it("closes on definitive rejections and local argument errors", () => {
    for (const [status, code] of [
      [409, "REQUEST_FAILED"],
      [409, "IDEMPOTENCY_CONFLICT"],
      [409, "PRICE_CHANGED"],
      [422, "INVALID_REQUEST"],
      [402, "API_KEY_LIMIT"],
      [401, "INVALID_API_KEY"],
      [413, "PAYLOAD_TOO_LARGE"],
    ] as const) {
      expect(verdict(serviceError(status, code)), code).toBe("close");
    }
    expect(verdict(new ArgumentError("prompt", "too long"))).toBe("close");
  });

  it("retains ANALYSIS_FAILED, the final answer the service keeps for replay", () => {
    expect(verdict(serviceError(409, "ANALYSIS_FAILED"))).toBe("retain");
  });

  it("replays uncertain outcomes and anything it cannot classify", () => {
    expect(verdict(serviceError(409, "REQUEST_UNCERTAIN"))).toBe("replay");
    expect(verdict(serviceError(409, "REFERENCES_PROCESSING"))).toBe("replay");
    expect(verdict(serviceError(500, "SERVER_ERROR"))).toBe("replay");
    expect(verdict(serviceError(503, "PROVIDER_UNAVAILABLE"))).toBe("replay");
    expect(verdict(new ConnectionError({ message: "reset", requestKind: "submission" }))).toBe("replay");
    expect(verdict(new IncompleteStreamError({ status: 200, code: undefined, message: "cut" }, ""))).toBe(
      "replay",
    );
    expect(verdict(new TypeError("fetch failed"))).toBe("replay");
    expect(verdict("a string")).toBe("replay");
  });
});

describe("backoffDelay: full jitter, Retry-After, longer waits for references", () => {
  const err = serviceError(503, "TEMPORARILY_UNAVAILABLE");

  it("draws from [0, min(cap, base * 2^n))", () => {
    expect(backoffDelay(0, err, DEFAULT_BACKOFF, () => 0)).toBe(0);
    expect(backoffDelay(0, err, DEFAULT_BACKOFF, max)).toBeCloseTo(500, 0);
    expect(backoffDelay(2, err, DEFAULT_BACKOFF, max)).toBeCloseTo(2000, 0);
    expect(backoffDelay(10, err, DEFAULT_BACKOFF, max)).toBeCloseTo(DEFAULT_BACKOFF.capMs, 0);
    expect(backoffDelay(1, err, DEFAULT_BACKOFF, () => 0.5)).toBeCloseTo(500, 0);
  });

  it("waits longer for REFERENCES_PROCESSING", () => {
    const refs = serviceError(409, "REFERENCES_PROCESSING");
    expect(backoffDelay(0, refs, DEFAULT_BACKOFF, max)).toBeCloseTo(DEFAULT_BACKOFF.referencesBaseMs, 0);
    expect(backoffDelay(0, refs, DEFAULT_BACKOFF, max)).toBeGreaterThan(
      backoffDelay(0, err, DEFAULT_BACKOFF, max),
    );
  });

  it("honours Retry-After, up to its cap", () => {
    expect(
      backoffDelay(0, serviceError(503, "TEMPORARILY_UNAVAILABLE", 3000), DEFAULT_BACKOFF, () => 0),
    ).toBe(3000);
    expect(
      backoffDelay(0, serviceError(503, "TEMPORARILY_UNAVAILABLE", 600_000), DEFAULT_BACKOFF, () => 0),
    ).toBe(DEFAULT_BACKOFF.retryAfterCapMs);
  });
});
