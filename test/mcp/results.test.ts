import { describe, expect, it } from "vitest";
import { ConnectionError, errorFromResponse, TimeoutError } from "../../src/client/service-errors.js";
import { IdempotencyConflictError, IdentifiedError, LedgerError } from "../../src/ledger/open-ledger.js";
import { declined } from "../../src/mcp/questions.js";
import { errorResult, okResult } from "../../src/mcp/results.js";
import { ArgumentError } from "../../src/shared/local-refusals.js";

const text = (r: ReturnType<typeof errorResult>) => (r.content[0] as { text: string }).text;

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
    const closed = new IdentifiedError(
      errorFromResponse({
        status: 409,
        code: "PRICE_CHANGED",
        message: "quote 9 > maxGems 5",
        requestKind: "submission",
      }),
      "gm-1",
      "closed",
    );
    const r = errorResult(closed);
    expect(text(r)).toMatch(
      /^PRICE_CHANGED: quote 9 > maxGems 5\. \(HTTP 409\) Next: .*Identity \(idempotencyKey\): gm-1, now closed/,
    );
    expect(r._meta).toEqual({ code: "PRICE_CHANGED", status: 409 });
    const open = new IdentifiedError(
      new TimeoutError({ message: "no answer in 30 s", requestKind: "submission" }),
      "gm-2",
      "uncertain",
    );
    expect(text(errorResult(open))).toMatch(
      /^TIMEOUT: .*Next: .*replays this request and never charges twice/,
    );
  });

  it("next steps name this server's tools and settings; the service's errors do not", () => {
    const key = errorFromResponse({ status: 401, code: undefined, message: "no", requestKind: "read" });
    expect(key.action).not.toMatch(/GENERATION_/);
    expect(text(errorResult(key))).toMatch(
      /^INVALID_API_KEY: .*Next: Check the API key \(GENERATION_API_KEY/,
    );
    const model = errorFromResponse({
      status: 422,
      code: "MODEL_UNAVAILABLE",
      message: "unknown model",
      requestKind: "submission",
    });
    expect(model.action).not.toMatch(/list_models/);
    expect(text(errorResult(model))).toMatch(/Next: .*Call list_models/);
    const ledger = new LedgerError("LEDGER_UNAVAILABLE", "cannot open");
    expect(ledger.action).not.toMatch(/GENERATION_STORE/);
    expect(text(errorResult(ledger))).toMatch(/Next: .*GENERATION_STORE/);
  });

  it("an upload whose outcome is unknown is not to be repeated blindly: uploads have no identity", () => {
    const cut = new ConnectionError({
      message: "POST /api/generate/assets failed: ECONNRESET",
      requestKind: "upload",
    });
    const t = text(errorResult(cut));
    expect(t).toMatch(
      /^NETWORK_ERROR: .*Next: The upload may or may not have arrived.*do not repeat it blindly/,
    );
    expect(t).not.toMatch(/same identity/);
    expect(cut.action).not.toMatch(/same identity/);
    const refused = errorFromResponse({
      status: 413,
      code: undefined,
      message: "too big",
      requestKind: "upload",
    });
    expect(text(errorResult(refused))).toMatch(/^PAYLOAD_TOO_LARGE: .*Next: The payload is too large/);
  });

  it("an identity is reported whatever failed after the claim, even a fault of ours", () => {
    const r = text(errorResult(new IdentifiedError(new TypeError("odd"), "gm-3", "sent")));
    expect(r).toMatch(/^INTERNAL_ERROR: odd\. .*Identity \(idempotencyKey\): gm-3\. Keep it/);
  });

  it("anything else is an INTERNAL_ERROR, and no text ever carries an API key", () => {
    const key = `lgk_${"ab".repeat(32)}`;
    const r = errorResult(new Error(`boom with ${key}`));
    expect(text(r)).toMatch(/^INTERNAL_ERROR: boom with lgk_\[redacted\]/);
    expect(JSON.stringify(okResult(`ok ${key}`, { next: "nothing: done" }))).not.toContain(key);
  });
});
