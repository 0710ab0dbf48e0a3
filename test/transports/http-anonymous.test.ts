/**
 * The strangers' share (src/transports/http-anonymous.ts): requests no credential admits, over all
 * addresses, bounded a second and at once, refused 503 with Retry-After naming the setting; the
 * share refills each second, a quarter of it kept for sign-ins under way; a signed-in key's
 * requests never take from it nor are refused by it.
 */
import { describe, expect, it } from "vitest";
import { LimitLog } from "../../src/shared/fair-shares.js";
import { AnonymousShare, type Place } from "../../src/transports/http-anonymous.js";
import { INIT, KEY_A, startProbe } from "./http-probe.js";

const held = (p: Place): p is { release(): void } => "release" in p;

function share(perSecond: number, inFlight: number, lines: string[] = []) {
  let now = 1_000_000;
  const s = new AnonymousShare(
    { anonymousPerSecond: perSecond, anonymousInFlight: inFlight },
    new LimitLog((l) => lines.push(l)),
    true,
    () => now,
  );
  return { s, tick: (ms: number) => (now += ms) };
}

describe("the share", () => {
  it("admits three quarters of a second's share to new requests, the rest to sign-ins under way, then refills", () => {
    const lines: string[] = [];
    const { s, tick } = share(8, 100, lines);
    const fresh = Array.from({ length: 8 }, () => s.take("/oauth/register"));
    expect(fresh.filter(held)).toHaveLength(6);
    expect(fresh.at(-1)).toEqual({ limit: "anonymousPerSecond" });
    // The sign-in page and the return to authorize still get the kept quarter, not more.
    expect(held(s.take("/oauth/sign-in/abc"))).toBe(true);
    expect(held(s.take("/oauth/authorize/xyz"))).toBe(true);
    expect(s.take("/oauth/sign-in/def")).toEqual({ limit: "anonymousPerSecond" });
    // A trailing slash alone is not a step under way.
    expect(AnonymousShare.underWay("/oauth/authorize/")).toBe(false);
    expect(AnonymousShare.underWay("/OAUTH/SIGN-IN/abc/")).toBe(true);
    tick(1_000);
    expect(held(s.take("/mcp"))).toBe(true);
    // Said once for the flood, not once per refusal.
    expect(lines.filter((l) => l.includes("anonymousPerSecond"))).toHaveLength(1);
  });

  it("bounds requests in flight, each place given back once", () => {
    const { s } = share(100, 2);
    const a = s.take("/mcp");
    const b = s.take("/mcp");
    expect(s.take("/mcp")).toEqual({ limit: "anonymousInFlight" });
    if (!held(a) || !held(b)) throw new Error("not admitted");
    a.release();
    a.release();
    expect(s.inFlight).toBe(1);
    expect(held(s.take("/mcp"))).toBe(true);
    expect(s.take("/mcp")).toEqual({ limit: "anonymousInFlight" });
  });

  it("admits everything where it is not enforced", () => {
    const s = new AnonymousShare(
      { anonymousPerSecond: 1, anonymousInFlight: 1 },
      new LimitLog(() => {}),
      false,
    );
    expect([s.take("/mcp"), s.take("/mcp"), s.take("/mcp")].every(held)).toBe(true);
  });
});

describe("through the server", () => {
  it("refuses refused credentials past the share 503 with Retry-After, and serves a key meanwhile", async () => {
    const server = await startProbe({ limits: { anonymousPerSecond: 4 } });
    try {
      const call = (key?: string) =>
        fetch(server.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
          },
          body: INIT,
        });
      // Sent one after another, inside one second or across two: at most 3 + 3 admitted (401).
      const answers = [];
      for (let i = 0; i < 12; i++) answers.push(await call("not-a-key"));
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(3);
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(6);
      const refused = answers.find((r) => r.status === 503);
      expect(refused?.headers.get("retry-after")).toBe("1");
      expect(await refused?.text()).toMatch(/anonymousPerSecond/);
      const keyed = await Promise.all(Array.from({ length: 8 }, () => call(KEY_A)));
      expect(keyed.map((r) => r.status)).toEqual(Array(8).fill(200));
    } finally {
      await server.close();
    }
  });
});
