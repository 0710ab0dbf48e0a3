/**
 * The scanner behind the money-wording checks (test/helpers/money-claims.ts): it flags sentences
 * that promise a free repeat without saying when, and passes qualified ones. refusals-cli.test.ts
 * runs it over what the built CLI says.
 */
import { describe, expect, it } from "vitest";
import { unqualifiedFreeRepeats } from "../helpers/money-claims.js";

describe("the money-wording scanner", () => {
  it("the scanner flags the false sentences the prompts used to carry, and passes qualified ones", () => {
    for (const old of [
      "4. If a task is not finished when the call returns, call poll_task with its task ID; never submit the same part again (an identical call replays it without a second charge).",
      "5. Generation tools wait a bounded time: if a task is not finished, call poll_task with its task ID (never submit again; a repeated identical call replays without charging twice).",
      "Cost: nothing new. list_requests and poll_task are free; repeating an identical call replays its identity, and the service returns the retained outcome without charging again.",
    ]) {
      expect(unqualifiedFreeRepeats(old), old).not.toEqual([]);
    }
    expect(
      unqualifiedFreeRepeats(
        "A call that was cut off, or whose outcome is unknown, is safe to repeat with the same arguments: it replays and is not charged twice.",
      ),
    ).toEqual([]);
  });
});
