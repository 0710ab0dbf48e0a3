/**
 * Registration that cannot be abused, through the built CLI in `--auth oauth --sandbox` over
 * loopback, behind a "proxy" the operator named (GENERATION_TRUSTED_PROXIES=127.0.0.1, so each
 * request says which client address it comes from): oversized and unsafe registrations refused
 * with an RFC 7591 error naming the field and the limit; a flood from one address stopped at its
 * rate (the left of X-Forwarded-For, which a client writes, not believed), and a flood from many
 * stopped at the deployment's, with the token store's size measured before and after; a flood of
 * authorization requests (each stores an interaction for the sign-in page) stopped the same way,
 * and so are sign-in forms posted over and over (each has the service check a key); a
 * registration no sign-in uses kept a day, one a sign-in used kept as long as its grants; Client
 * ID Metadata Documents fetched once per their Cache-Control and never stored as clients, and
 * one that cannot be used logged with its host and reason.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LedgerStore } from "../../src/ledger/store.js";
import { chromiumMissing, hasChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, type Started } from "../helpers/cli.js";
import { authorizationUrl, exchangeCode, pkce, register, signInCapturing } from "../helpers/oauth-hosts.js";
import {
  type DocumentHost,
  type OAuthServer,
  startOAuthServer,
  tokenStore,
} from "../helpers/oauth-server.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const REDIRECT = "https://host.example/callback";

runnableOrSkipped(chromiumMissing(), "the OAuth registration tests (test/e2e/oauth-registration.test.ts)");

const iso = isolatedEnv();
let server: OAuthServer;
let cli: Started;
let issuer: string;
let browser: Browser;
let store: LedgerStore;
let documents: DocumentHost;

const clients = () => tokenStore(store).size("Client");
/** Sends `count` registrations at once, `from(i)` naming each one's client address. */
async function flood(count: number, from: (i: number) => string) {
  const started = Date.now();
  const all = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      register(issuer, { client_name: `Flood ${i}`, redirect_uris: [REDIRECT] }, from(i)),
    ),
  );
  return {
    all,
    accepted: all.filter((r) => r.status === 201).length,
    seconds: (Date.now() - started) / 1000,
  };
}

beforeAll(async () => {
  if (!hasChromium()) return;
  server = await startOAuthServer(iso, 13, {
    GENERATION_TRUSTED_PROXIES: "127.0.0.1",
    // The routes' own limits are tested here, in bursts; the strangers' share, in admission-cli.test.ts.
    GENERATION_HTTP_LIMITS: "anonymousPerSecond=100000,anonymousInFlight=10000",
  });
  ({ cli, issuer, browser, store, documents } = server);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  iso.cleanup();
});

describe.runIf(hasChromium())("registration through the built CLI", () => {
  it("refuses oversized and unsafe registrations with an RFC 7591 error naming the field and the limit; none is stored", async () => {
    const before = await clients();
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [
        { client_name: "A".repeat(40_000), redirect_uris: [REDIRECT] },
        "invalid_client_metadata",
        /^client_name: 40000 characters; at most 100$/,
      ],
      [
        { redirect_uris: Array.from({ length: 500 }, (_, i) => `https://host.example/${i}`) },
        "invalid_redirect_uri",
        /^redirect_uris: 500 given; at most 10 redirect URIs per client$/,
      ],
      [
        { redirect_uris: ["http://evil.example/cb"] },
        "invalid_redirect_uri",
        /^redirect_uris\[0\]: plain http is allowed only on loopback/,
      ],
      [
        { redirect_uris: [`https://host.example/${"x".repeat(2_000)}`] },
        "invalid_redirect_uri",
        /^redirect_uris\[0\]: 2021 characters; at most 1000$/,
      ],
      [
        {
          redirect_uris: [`https://host.example/${"r".repeat(950)}`],
          ...Object.fromEntries(
            ["client_uri", "logo_uri", "policy_uri", "tos_uri"].map((f) => [
              f,
              `https://host.example/${"y".repeat(950)}`,
            ]),
          ),
        },
        "invalid_client_metadata",
        /^the client's metadata is \d+ bytes; at most 4096$/,
      ],
      [
        { token_endpoint_auth_method: "client_secret_post", redirect_uris: ["myapp://cb"] },
        "invalid_redirect_uri",
        /^redirect_uris\[0\]: a private-use scheme \(myapp:\) is allowed only for a public client/,
      ],
      [
        { redirect_uris: ["javascript:alert(1)"] },
        "invalid_redirect_uri",
        /^redirect_uris\[0\]: the javascript scheme is not a redirect target$/,
      ],
    ];
    for (const [body, error, description] of cases) {
      const res = await register(issuer, body, "203.0.113.1");
      expect(res.status, JSON.stringify(res.body).slice(0, 200)).toBe(400);
      expect(res.body.error).toBe(error);
      expect(String(res.body.error_description)).toMatch(description);
    }
    expect(await clients()).toEqual(before);
  });

  it("a flood from one address: its burst is stored, the rest refused with 429 and Retry-After; the store stays bounded", async () => {
    const before = await clients();
    // The client writes the left of X-Forwarded-For; only the hop the trusted proxy added counts.
    const one = await flood(300, (i) => `10.${i >> 8}.${i & 255}.1, 203.0.113.2`);
    const after = await clients();
    process.stdout.write(
      `registration flood from one address: ${one.accepted} of 300 stored in ${one.seconds.toFixed(1)} s; Client rows ${before.rows} → ${after.rows}, bytes ${before.bytes} → ${after.bytes}\n`,
    );
    // A fixed minute's 20, or up to 40 when the flood spans a window's edge.
    expect(one.accepted).toBeGreaterThanOrEqual(20);
    expect(one.accepted).toBeLessThanOrEqual(40);
    const refused = one.all.find((r) => r.status === 429);
    expect(refused?.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(String(refused?.body.error_description)).toContain("at most 20 a minute from one address");
    expect(after.rows - before.rows).toBe(one.accepted);
    expect(after.bytes - before.bytes).toBeLessThanOrEqual(one.accepted * 4_096);
    expect(cli.stderr()).toContain(
      "registration refused for 203.0.113.2: at most 20 a minute from one address",
    );
    // Another address is counted apart; an IPv6 client by its /64.
    expect((await register(issuer, { redirect_uris: [REDIRECT] }, "203.0.113.3")).status).toBe(201);
    const six = await flood(25, (i) => `2001:db8:1:2::${i + 1}`);
    expect(six.accepted).toBeLessThan(25);
  });

  it("a flood of authorization requests from one address: its burst gets the sign-in page, the rest 429; the store stays bounded", async () => {
    const reg = await register(issuer, { client_name: "Flooded", redirect_uris: [REDIRECT] }, "203.0.113.20");
    expect(reg.status).toBe(201);
    const clientId = String(reg.body.client_id);
    const interactions = () => tokenStore(store).size("Interaction");
    const before = await interactions();
    const started = Date.now();
    const all = await Promise.all(
      Array.from({ length: 150 }, () =>
        fetch(authorizationUrl(issuer, { clientId, redirectUri: REDIRECT, challenge: pkce().challenge }), {
          redirect: "manual",
          headers: { "x-forwarded-for": "203.0.113.21" },
        }),
      ),
    );
    const seconds = (Date.now() - started) / 1000;
    const after = await interactions();
    const shown = all.filter((r) => r.status === 303).length;
    process.stdout.write(
      `authorization flood from one address: ${shown} of 150 shown the sign-in page in ${seconds.toFixed(1)} s; Interaction rows ${before.rows} → ${after.rows}\n`,
    );
    expect(shown).toBeGreaterThanOrEqual(60);
    expect(shown).toBeLessThanOrEqual(120);
    const refused = all.find((r) => r.status === 429);
    expect(refused?.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    const body = (await refused?.json()) as { error_description?: string } | undefined;
    expect(body?.error_description).toContain(
      "Too many authorization requests: at most 60 a minute from one address",
    );
    expect(all.every((r) => r.status === 303 || r.status === 429)).toBe(true);
    expect(after.rows - before.rows).toBeLessThanOrEqual(shown);
    expect(cli.stderr()).toContain("authorization request refused for 203.0.113.21: at most 60 a minute");
    // Another address still gets the sign-in page.
    const other = await fetch(
      authorizationUrl(issuer, { clientId, redirectUri: REDIRECT, challenge: pkce().challenge }),
      {
        redirect: "manual",
        headers: { "x-forwarded-for": "203.0.113.22" },
      },
    );
    expect(other.status).toBe(303);
  });

  it("the sign-in form posted over and over from one address: each a key check with the service, until 429", async () => {
    const reg = await register(
      issuer,
      { client_name: "Guessing", redirect_uris: [REDIRECT] },
      "203.0.113.30",
    );
    const clientId = String(reg.body.client_id);
    const from = { "x-forwarded-for": "203.0.113.31" };
    const start = await fetch(
      authorizationUrl(issuer, { clientId, redirectUri: REDIRECT, challenge: pkce().challenge }),
      {
        redirect: "manual",
        headers: from,
      },
    );
    const cookie = start.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const page = new URL(start.headers.get("location") ?? "", issuer).href;
    const html = await (await fetch(page, { headers: { ...from, cookie } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
    const post = () =>
      fetch(page, {
        method: "POST",
        redirect: "manual",
        headers: { ...from, cookie, origin: issuer, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrf, action: "allow", key: `lgk_${"0".repeat(64)}` }).toString(),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await post()).status);
    // Each of the first 30 had the service check the key (refused: 401 on the page); then 429.
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses[30]).toBe(429);
    const refused = await post();
    expect(refused.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(await refused.text()).toContain("Too many sign-in attempts: at most 30 a minute from one address");
    expect(cli.stderr()).toContain("sign-in refused for 203.0.113.31: at most 30 a minute from one address");
  });

  it("a registration no sign-in uses expires within a day; one a sign-in used lives as long as its grants", async () => {
    const callback = "https://unused.example/cb";
    const reg = await register(issuer, { client_name: "Unused", redirect_uris: [callback] }, "203.0.113.4");
    expect(reg.status).toBe(201);
    const clientId = String(reg.body.client_id);
    const unused = (await tokenStore(store).expiry("Client", clientId)) ?? 0;
    expect(unused).toBeGreaterThan(Date.now() + DAY_MS - 60_000);
    expect(unused).toBeLessThanOrEqual(Date.now() + DAY_MS);
    const { verifier, challenge } = pkce();
    const back = await signInCapturing(
      browser,
      authorizationUrl(issuer, { clientId, redirectUri: callback, challenge }),
      callback,
      {
        action: "sandbox",
      },
    );
    const tokens = await exchangeCode(issuer, {
      clientId,
      code: back.get("code") ?? "",
      redirectUri: callback,
      verifier,
    });
    expect(tokens.status).toBe(200);
    const used = (await tokenStore(store).expiry("Client", clientId)) ?? 0;
    expect(used).toBeGreaterThan(Date.now() + 89 * DAY_MS);
  });

  it("Client ID Metadata Documents: fetched once per their Cache-Control, never stored as clients; a failure is logged by host and reason", async () => {
    const before = await clients();
    const url = documents.serve(
      "/cached.json",
      (id) => ({
        client_id: id,
        client_name: "Cached",
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: "none",
      }),
      { "cache-control": "max-age=600" },
    );
    const authorize = (clientId: string) =>
      fetch(authorizationUrl(issuer, { clientId, redirectUri: REDIRECT, challenge: pkce().challenge }), {
        redirect: "manual",
      });
    for (let i = 0; i < 3; i++) {
      const res = await authorize(url);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toMatch(/\/oauth\/sign-in\//);
    }
    expect(documents.fetches("/cached.json")).toBe(1);
    expect(await tokenStore(store).expiry("Client", url)).toBeUndefined();
    expect((await clients()).rows).toBe(before.rows);

    const missing = await authorize(documents.url("/missing.json"));
    expect(missing.status).toBe(400);
    const unsafe = documents.serve("/unsafe.json", (id) => ({
      client_id: id,
      redirect_uris: ["http://evil.example/cb"],
    }));
    expect((await authorize(unsafe)).status).toBe(400);
    const host = new URL(url).host;
    expect(cli.stderr()).toContain(
      `client metadata document from ${host} refused: client_id metadata document fetch failed: unexpected response status 404`,
    );
    expect(cli.stderr()).toContain(
      `client metadata document from ${host} refused: redirect_uris[0]: plain http is allowed only on loopback`,
    );
  });

  it("a flood from many addresses stops at the deployment's rate: the store stays bounded", async () => {
    const before = await clients();
    const many = await flood(300, (i) => `198.18.${i >> 8}.${i & 255}`);
    const after = await clients();
    process.stdout.write(
      `registration flood from 300 addresses: ${many.accepted} of 300 stored in ${many.seconds.toFixed(1)} s; Client rows ${before.rows} → ${after.rows}, bytes ${before.bytes} → ${after.bytes}\n`,
    );
    // 120 a minute on the deployment (240 across a window's edge); earlier tests used part of it.
    expect(many.accepted).toBeLessThanOrEqual(240);
    expect(
      many.all.some(
        (r) => r.status === 429 && String(r.body.error_description).includes("a minute on this deployment"),
      ),
    ).toBe(true);
    expect(after.rows - before.rows).toBe(many.accepted);
  });
});
