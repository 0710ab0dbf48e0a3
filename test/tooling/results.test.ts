import { describe, expect, it } from "vitest";
import { IdempotencyConflictError, LedgerError } from "../../src/ledger/index.js";
import { ArgumentError, errorFromResponse, TimeoutError } from "../../src/service/errors.js";
import { declined, errorResult, okResult } from "../../src/tooling/results.js";

const text = (r: ReturnType<typeof errorResult>) => (r.content[0] as { text: string }).text;
const withIdentity = <E extends Error>(e: E, identity: string) => Object.assign(e, { identity });

describe("error results", () => {
  it("local refusals start with their code and say what to do", () => {
    const r = errorResult(new ArgumentError("prompt", "must be at most 30000 characters"));
    expect(r.isError).toBe(true);
    expect(text(r)).toBe(
      "INVALID_ARGUMENT: prompt: must be at most 30000 characters. Next: Fix the named argument and call again; nothing was sent.",
    );
    expect(r._meta).toEqual({ code: "INVALID_ARGUMENT" });
    expect(text(errorResult(new IdempotencyConflictError("k1", "it belongs to a different body")))).toMatch(
      /^IDEMPOTENCY_CONFLICT: idempotencyKey: "k1" was already used .*Next: /,
    );
    expect(text(errorResult(new LedgerError("LEDGER_WRITE_FAILED", "disk full")))).toMatch(
      /^LEDGER_WRITE_FAILED: disk full\. Next: .*GENERATION_STORE/,
    );
    expect(text(errorResult(declined("to spend Gems")))).toMatch(/^USER_DECLINED: .*nothing was sent/);
  });

  it("service errors carry status and code, and the identity only invites a replay while it is open", () => {
    const closed = withIdentity(
      errorFromResponse({
        status: 409,
        code: "PRICE_CHANGED",
        message: "quote 9 > maxGems 5",
        requestKind: "submission",
      }),
      "gm-1",
    );
    const r = errorResult(closed);
    expect(text(r)).toMatch(
      /^PRICE_CHANGED: quote 9 > maxGems 5\. \(HTTP 409\) Next: .*Identity \(idempotencyKey\): gm-1, now closed/,
    );
    expect(r._meta).toEqual({ code: "PRICE_CHANGED", status: 409 });
    const open = withIdentity(
      new TimeoutError({ message: "no answer in 30 s", requestKind: "submission" }),
      "gm-2",
    );
    expect(text(errorResult(open))).toMatch(
      /^TIMEOUT: .*Next: .*replays this request and never charges twice/,
    );
  });

  it("anything else is an INTERNAL_ERROR, and no text ever carries an API key", () => {
    const key = `lgk_${"ab".repeat(32)}`;
    const r = errorResult(new Error(`boom with ${key}`));
    expect(text(r)).toMatch(/^INTERNAL_ERROR: boom with lgk_\[redacted\]/);
    expect(JSON.stringify(okResult(`ok ${key}`, {}))).not.toContain(key);
  });
});
