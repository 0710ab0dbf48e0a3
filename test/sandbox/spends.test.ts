/**
 * A key's spends summed once (src/sandbox/keys.ts): whatever order spends arrive and the clock is
 * read in, the usage is what summing every spend afresh gives, across UTC months and if an
 * injected clock goes back.
 */
import { describe, expect, it } from "vitest";
import { type Spend, Spends } from "../../src/sandbox/keys.js";

const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 28);

/** The rule itself, spelled out: settled spends count, this month's apart; open ones are outstanding. */
function expected(spends: Spend[], now: number) {
  const month = new Date(now).toISOString().slice(0, 7);
  const settled = spends.filter((s) => s.settleAt <= now);
  return {
    chargedTotal: settled.reduce((n, s) => n + s.charged, 0),
    chargedThisMonth: settled
      .filter((s) => new Date(s.settleAt).toISOString().slice(0, 7) === month)
      .reduce((n, s) => n + s.charged, 0),
    outstanding: spends.filter((s) => s.settleAt > now).reduce((n, s) => n + s.quoted, 0),
  };
}

describe("a key's spends", () => {
  it("read between additions, across a month's end and a clock that goes back, equal the sum afresh", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const spends = new Spends();
    const all: Spend[] = [];
    let now = START;
    for (let i = 0; i < 400; i++) {
      // Mostly forward, sometimes back (an injected clock), over about a week on each side of 1 November.
      now += Math.round((random() - 0.1) * DAY * 0.05);
      const spend = {
        quoted: 10,
        charged: Math.floor(random() * 10),
        settleAt: now + Math.round(random() * DAY),
      };
      spends.add(spend);
      all.push(spend);
      expect(spends.usage(now)).toEqual(expected(all, now));
    }
    expect(new Date(now).getUTCMonth()).toBe(10);
    expect(spends.usage(now + 10 * DAY)).toEqual(expected(all, now + 10 * DAY));
  });
});
