/**
 * One family of errors per room, each under the root CodedError (src/shared/coded-error.ts) with a
 * code and a next action, and describeError telling them apart by class: every code the service's
 * error table (docs/service.md#errors) lists reaches a class of the service's family with its
 * client action and a next step; every local and ledger error is a CodedError; an object that
 * only looks like one is not.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SaveFailedError, SaveNotAllowedError } from "../../src/calls/files/save-refusals.js";
import {
  CLIENT_ACTIONS,
  ConnectionError,
  errorFromResponse,
  IncompleteStreamError,
  InvalidResponseError,
  OutputTooLargeError,
  OutputUnavailableError,
  ServiceError,
  TimeoutError,
} from "../../src/client/service-errors.js";
import {
  IdempotencyConflictError,
  IdentifiedError,
  LedgerError,
  LedgerFailure,
} from "../../src/ledger/ledger-errors.js";
import { UserDeclinedError } from "../../src/mcp/questions.js";
import { describeError } from "../../src/mcp/results.js";
import { CodedError } from "../../src/shared/coded-error.js";
import { ArgumentError, LocalRefusal } from "../../src/shared/local-refusals.js";

/** The rows of docs/service.md#errors: each status with the codes it lists (none: "not documented" or "or none"). */
function serviceTable(): { status: number; codes: string[]; codeless: boolean }[] {
  const doc = readFileSync(join(import.meta.dirname, "../../docs/service.md"), "utf8");
  const section = doc.slice(
    doc.indexOf("\n## Errors\n"),
    doc.indexOf("\n## ", doc.indexOf("\n## Errors\n") + 1),
  );
  const rows = section.split("\n").filter((l) => /^\| \d{3}/.test(l));
  return rows.flatMap((row) => {
    const [statuses = "", codes = ""] = row.split("|").slice(1, 3);
    const named = [...codes.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1] as string);
    return [...statuses.matchAll(/\d{3}/g)].map((s) => ({
      status: Number(s[0]),
      codes: named,
      codeless: named.length === 0 || /or none/.test(codes),
    }));
  });
}

const TABLE = serviceTable();

describe("the service's family, from its error table", () => {
  it("reads the whole table: every status and code it lists", () => {
    expect(new Set(TABLE.map((r) => r.status))).toEqual(
      new Set([400, 401, 402, 403, 404, 409, 413, 422, 502, 503]),
    );
    expect(TABLE.flatMap((r) => r.codes)).toHaveLength(20);
  });

  for (const { status, codes, codeless } of TABLE) {
    const cases = [...codes, ...(codeless ? [undefined] : [])];
    for (const code of cases) {
      it(`${status} ${code ?? "(no code)"}: a class of the service's family, its action, a next step`, () => {
        for (const requestKind of ["submission", "read"] as const) {
          const err = errorFromResponse({ status, code, message: "refused", requestKind });
          expect(err).toBeInstanceOf(CodedError);
          expect(err).toBeInstanceOf(ServiceError);
          // A class named for what happened, never the bare base.
          expect(err.constructor).not.toBe(ServiceError);
          expect(err.status).toBe(status);
          if (code !== undefined) {
            expect(err.code).toBe(code);
            expect(err.action).toBe(CLIENT_ACTIONS[code]);
          }
          expect(err.action.length).toBeGreaterThan(10);
          const { code: shown, text, status: meta } = describeError(err);
          expect(shown).toBe(err.code);
          expect(meta).toBe(status);
          expect(text).toMatch(new RegExp(`^${err.code}: refused\\. \\(HTTP ${status}\\) Next: \\S.{10,}`));
        }
      });
    }
  }

  it("every failure on the way to the service is of the family too, with an action", () => {
    const init = { message: "m", requestKind: "read" as const };
    const failures: ServiceError[] = [
      new ConnectionError(init),
      new TimeoutError(init),
      new IncompleteStreamError({ status: 200, code: undefined, message: "m" }, "partial"),
      new InvalidResponseError({ ...init, status: 200, code: undefined }),
      new OutputTooLargeError({ status: 200, message: "m" }, 10),
      new OutputUnavailableError({ status: 403, message: "m" }),
    ];
    for (const err of failures) {
      expect(err).toBeInstanceOf(CodedError);
      expect(err.action, err.name).toBe(CLIENT_ACTIONS[err.code]);
      expect(describeError(err).text).toMatch(new RegExp(`^${err.code}: m\\. .*Next: \\S`));
    }
  });
});

describe("local refusals and the ledger's errors", () => {
  const cases: [CodedError, string, abstract new (...args: never[]) => CodedError][] = [
    [new ArgumentError("prompt", "too long"), "INVALID_ARGUMENT", LocalRefusal],
    [new UserDeclinedError("to spend Gems"), "USER_DECLINED", LocalRefusal],
    [new SaveNotAllowedError("Outputs cannot be saved: no", "Do this."), "SAVE_NOT_ALLOWED", LocalRefusal],
    [new SaveFailedError("1 output of task t1"), "SAVE_FAILED", LocalRefusal],
    [new LedgerError("LEDGER_UNAVAILABLE", "cannot open"), "LEDGER_UNAVAILABLE", LedgerFailure],
    [new IdempotencyConflictError("k1", "it belongs to another body"), "IDEMPOTENCY_CONFLICT", LedgerFailure],
  ];
  for (const [err, code, Base] of cases) {
    it(`${err.name} is a ${Base.name} with code ${code} and an action`, () => {
      expect(err).toBeInstanceOf(Base);
      expect(err).toBeInstanceOf(CodedError);
      expect(err.code).toBe(code);
      expect(err.action).toMatch(/\S{3}.*\.$/);
      expect(describeError(err)).toEqual({
        code,
        text: expect.stringMatching(new RegExp(`^${code}: .*Next: \\S`)),
      });
    });
  }

  it("never says nothing was sent of a request the ledger failed after sending", () => {
    const store = new LedgerError("LEDGER_WRITE_FAILED", "the store is unreachable");
    expect(store.action).toMatch(/nothing was sent/);
    const after = new IdentifiedError(store, "gm-3", "sent");
    expect(after.code).toBe("LEDGER_WRITE_FAILED");
    expect(after.action).not.toMatch(/nothing was sent/);
    expect(after.action).toMatch(/Keep the identity/);
    expect(new IdentifiedError(store, "gm-4", "prepared").action).toMatch(/nothing was sent/);
  });

  it("a claimed run's failure is the ledger's, carrying its cause's code and action", () => {
    const cause = new TimeoutError({ message: "no answer", requestKind: "submission" });
    const err = new IdentifiedError(cause, "gm-1", "uncertain");
    expect(err).toBeInstanceOf(LedgerFailure);
    expect(err).toMatchObject({ code: "TIMEOUT", action: cause.action, identity: "gm-1" });
    const foreign = new IdentifiedError(new TypeError("odd"), "gm-2", "closed");
    expect(foreign).toMatchObject({ code: "INTERNAL_ERROR", action: expect.stringMatching(/new identity/) });
    expect(describeError(foreign).code).toBe("INTERNAL_ERROR");
  });
});

describe("describeError reads the class, not the shape", () => {
  it("an object that only carries a code and an action is not one of ours", () => {
    const lookalike = Object.assign(new Error("looks refused"), {
      code: "SAVE_NOT_ALLOWED",
      action: "Do as it says.",
      status: 409,
    });
    const { code, text, status } = describeError(lookalike);
    expect(code).toBe("INTERNAL_ERROR");
    expect(status).toBeUndefined();
    expect(text).toMatch(/^INTERNAL_ERROR: looks refused\. Next: this is a fault of the MCP server/);
  });
});
