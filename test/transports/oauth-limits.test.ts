/**
 * The authorization server's rate limits (src/transports/oauth/rate-limit.ts, store-limiter.ts,
 * oauth-routes.ts): what oidc-provider's own router serves is exactly what is counted (every
 * case, trailing slash and HEAD spelling checked against the library's router), each limit per
 * source and per deployment, two replicas on one store (SQLite file, PostgreSQL, Redis) admitting
 * together what one admits, the in-memory fallback while the store fails, and the operator log
 * under a flood.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readServeLimits } from "../../src/config/serve-limits.js";
import type { KeyedStore } from "../../src/ledger/open-ledger.js";
import { oauthLog } from "../../src/transports/oauth/oauth-log.js";
import { classify } from "../../src/transports/oauth/oauth-routes.js";
import { oauthLimits, RateLimit, REGISTRATIONS, SIGN_INS } from "../../src/transports/oauth/rate-limit.js";
import { STORE_KINDS, twoReplicaStores } from "../ledger/stores.js";

interface LibRouter {
  get(name: string, path: string, ...mw: unknown[]): LibRouter;
  post(name: string, path: string, ...mw: unknown[]): LibRouter;
  options(name: string, path: string, ...mw: unknown[]): LibRouter;
  match(method: string, path: string): { route: { name: string } } | undefined;
}

/** oidc-provider's own router with the routes oauth-provider.ts's configuration registers. */
async function libraryRouter(): Promise<LibRouter> {
  const file = "oidc-provider/lib/helpers/router.js";
  const { default: Router } = (await import(file)) as { default: new () => LibRouter };
  const r = new Router();
  const none = () => undefined;
  r.get("authorization", "/oauth/authorize", none);
  r.get("resume", "/oauth/authorize/:uid", none);
  r.post("token", "/oauth/token", none).options("cors.token", "/oauth/token", none);
  r.get("jwks", "/oauth/jwks", none).options("cors.jwks", "/oauth/jwks", none);
  for (const d of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"])
    r.get("discovery", d, none).options("cors.discovery", d, none);
  r.post("registration", "/oauth/register", none).get("client", "/oauth/register/:clientId", none);
  r.post("revocation", "/oauth/revoke", none).options("cors.revocation", "/oauth/revoke", none);
  r.post("end_session_confirm", "/oauth/logout/confirm", none);
  return r;
}

/** Served by the library, refused here on purpose: unused by this server. */
const REFUSED_ON_PURPOSE = new Set(["client", "end_session_confirm"]);

function spellings(path: string): string[] {
  const cap = path.replace(/\/(\w)/g, (_, c: string) => `/${c.toUpperCase()}`);
  const out = [path, path.toUpperCase(), cap, `${path}/`, `${path}//`, `${path.toUpperCase()}/`];
  out.push(
    `${path}%2F`,
    path.replace("i", "\u0131"),
    path.replace("s", "\u017f"),
    path.replace("k", "\u212a"),
  );
  out.push(`/${path}`, path.replace("/oauth", "/oauth/."), `${path}/x`);
  return out;
}

describe("what is served is what is counted", () => {
  it("classifies every spelling as oidc-provider's router routes it", async () => {
    const lib = await libraryRouter();
    const paths = [
      "/oauth/authorize",
      "/oauth/register",
      "/oauth/token",
      "/oauth/revoke",
      "/oauth/jwks",
      "/oauth/par",
      "/oauth/authorize/abc",
      "/oauth/register/abc",
      "/oauth/logout/confirm",
      "/oauth/userinfo",
      "/oauth/introspect",
      "/.well-known/openid-configuration",
    ];
    let checked = 0;
    for (const base of paths)
      for (const path of spellings(base))
        for (const method of ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]) {
          const served = lib.match(method, path)?.route.name;
          const mine = classify(method, path);
          const at = `${method} ${path}`;
          if (served !== undefined && !REFUSED_ON_PURPOSE.has(served)) expect(mine.served, at).toBe(true);
          if (!mine.served) {
            expect([404, 405], at).toContain(mine.status);
            continue;
          }
          expect(served, at).toBeDefined();
          expect(mine.counted === "authorization", at).toBe(served === "authorization");
          expect(mine.counted === "registration", at).toBe(served === "registration");
          checked++;
        }
    expect(checked).toBeGreaterThan(40);
  });

  it("counts the bypasses of the last round: trailing slash, case, HEAD; refuses PAR and what is not served", () => {
    expect(classify("POST", "/oauth/register/")).toMatchObject({ served: true, counted: "registration" });
    expect(classify("POST", "/oauth/Register")).toMatchObject({ served: true, counted: "registration" });
    expect(classify("GET", "/oauth/authorize/")).toMatchObject({ served: true, counted: "authorization" });
    expect(classify("GET", "/oauth/AUTHORIZE")).toMatchObject({ served: true, counted: "authorization" });
    expect(classify("HEAD", "/oauth/authorize")).toMatchObject({ served: true, counted: "authorization" });
    expect(classify("POST", "/oauth/par")).toEqual({ served: false, status: 404 });
    expect(classify("POST", "/oauth/PAR/")).toEqual({ served: false, status: 404 });
    expect(classify("POST", "/oauth/authorize")).toEqual({ served: false, status: 405, allow: "GET, HEAD" });
    expect(classify("GET", "/oauth/register")).toEqual({ served: false, status: 405, allow: "POST" });
  });
});

describe("a limit on its own (no store: in memory)", () => {
  it("admits its figure per source a minute, then refuses naming the limit and the wait; other sources apart", async () => {
    const limit = new RateLimit(undefined, "t-reg", REGISTRATIONS);
    for (let i = 0; i < 20; i++) expect((await limit.admit("203.0.113.1")).ok).toBe(true);
    const refused = await limit.admit("203.0.113.1");
    expect(refused).toMatchObject({ ok: false, limit: "at most 20 a minute from one address" });
    expect(refused.ok === false && refused.retryAfterS).toBeGreaterThan(0);
    expect(refused.ok === false && refused.retryAfterS).toBeLessThanOrEqual(60);
    expect((await limit.admit("203.0.113.2")).ok).toBe(true);
  });

  it("stops a flood from many sources at the deployment's figure", async () => {
    const limit = new RateLimit(undefined, "t-reg", REGISTRATIONS);
    let admitted = 0;
    for (let i = 0; i < 300; i++) if ((await limit.admit(`198.51.100.${i % 250}:${i}`)).ok) admitted++;
    expect(admitted).toBe(REGISTRATIONS.perDeployment);
    const last = await limit.admit("192.0.2.77");
    expect(last).toMatchObject({ ok: false, limit: "at most 120 a minute on this deployment" });
  });

  it("once the deployment's figure is spent, new sources are refused without being remembered", async () => {
    const limit = new RateLimit(undefined, "t-heap", REGISTRATIONS);
    for (let i = 0; i < REGISTRATIONS.perDeployment; i++) expect((await limit.admit(`a${i}`)).ok).toBe(true);
    // Measured after full collections (in this test's process only): without them the garbage of
    // 100,000 calls, collected whenever V8 chooses, once passed 48 MiB on a loaded machine.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 100_000; i++) await limit.admit(`2001:db8:${i >> 16}:${i & 0xffff}::/64`);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // Remembering each would hold a record and a timer apiece: tens of MiB for 100,000.
    expect(grown).toBeLessThan(12 * 1024 * 1024);
  });

  it("spends the deployment's reserve once a minute's figure is spent", async () => {
    const limit = new RateLimit(undefined, "t-sign", SIGN_INS);
    let admitted = 0;
    for (let i = 0; i < 2_400; i++) if ((await limit.admit(`s${i}`)).ok) admitted++;
    expect(admitted).toBe(SIGN_INS.perDeployment + SIGN_INS.reserve);
  });

  it("takes the operator's sign-in figures (GENERATION_HTTP_LIMITS) for authorizations and sign-in posts alike", async () => {
    const limits = oauthLimits(
      undefined,
      undefined,
      oauthLog(() => {}),
      { perDeployment: 5, reserve: 3 },
    );
    for (const limit of [limits.authorizations, limits.signIns]) {
      let admitted = 0;
      for (let i = 0; i < 50; i++) if ((await limit.admit(`u${i}`)).ok) admitted++;
      expect(admitted).toBe(8);
    }
    expect(readServeLimits("signInsPerMinute=900,signInReserve=20000", "GENERATION_HTTP_LIMITS")).toEqual({
      signInsPerMinute: 900,
      signInReserve: 20_000,
    });
  });
});

describe("while the store fails", () => {
  it("counts in memory instead, with the same figures, and counts in the store again once it answers", async () => {
    let down = true;
    const counts = new Map<string, number>();
    const kv = {
      async count(key: string, points: number, windowMs: number) {
        if (down) throw new Error("store unreachable");
        const n = (counts.get(key) ?? 0) + points;
        counts.set(key, n);
        return { points: n, expiresAt: Date.now() + windowMs };
      },
      delete: async () => undefined,
    } as unknown as KeyedStore;
    const limit = new RateLimit(kv, "t-down", REGISTRATIONS);
    for (let i = 0; i < 20; i++) expect((await limit.admit("203.0.113.5")).ok).toBe(true);
    expect((await limit.admit("203.0.113.5")).ok).toBe(false);
    down = false;
    expect((await limit.admit("203.0.113.6")).ok).toBe(true);
    expect(counts.get("rl:t-down:src:203.0.113.6")).toBe(1);
  });
});

describe.each(STORE_KINDS)("two replicas on one %s store", (kind) => {
  const stores = twoReplicaStores(kind);

  it("admit together what one admits, per source and per deployment, however the requests race", async () => {
    const [a, b] = stores.map((s) => new RateLimit(s.keyed(), "t-two", REGISTRATIONS));
    if (a === undefined || b === undefined) throw new Error("two stores expected");
    const one = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).admit("203.0.113.9")));
    expect(one.filter((r) => r.ok)).toHaveLength(REGISTRATIONS.perSource);
    const many = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).admit(`2001:db8:${i}::/64`)),
    );
    expect(many.filter((r) => r.ok)).toHaveLength(REGISTRATIONS.perDeployment - REGISTRATIONS.perSource);
  });
});

describe("the operator log under a flood", () => {
  afterEach(() => vi.useRealTimers());

  it("says one line per source a minute, counting the rest, not one line per client", () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const log = oauthLog((l) => lines.push(l));
    for (let i = 0; i < 3_000; i++)
      log.registered(`c${i}`, `Flood ${i}`, ["https://x.example/cb"], "203.0.113.4");
    log.registered("d1", "Cursor", ["cursor://anysphere.cursor-mcp/oauth/callback"], "198.51.100.3");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('client registered: d1 "Cursor", returning to cursor://anysphere.cursor-mcp');
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toContain("2999 more clients registered from 203.0.113.4 in the last minute");
    for (let i = 0; i < 10; i++) log.registered(`e${i}`, "Flood", ["https://x.example/cb"], "203.0.113.4");
    vi.advanceTimersByTime(60_000);
    expect(lines.slice(3)).toEqual([
      expect.stringContaining("10 more clients registered from 203.0.113.4 in the last minute"),
    ]);
    vi.advanceTimersByTime(120_000);
    log.registered("f1", "Later", ["https://x.example/cb"], "203.0.113.4");
    expect(lines.at(-1)).toContain('client registered: f1 "Later"');
    for (let i = 0; i < 500; i++) log.keyRefused("c1", "INVALID_API_KEY", "203.0.113.4");
    vi.advanceTimersByTime(60_000);
    expect(lines.filter((l) => l.includes("refused"))).toHaveLength(2);
  });
});
