/**
 * The bypasses of the last round, tried again through the built CLI in `--auth oauth --sandbox`
 * over loopback, behind a "proxy" the operator named (GENERATION_TRUSTED_PROXIES=127.0.0.1, so each
 * request says which client address it comes from):
 * - every spelling oidc-provider serves (trailing slash, any case, HEAD for GET) counted against
 *   the one limit of its endpoint, PAR and unserved spellings refused with nothing stored;
 * - Client ID Metadata Documents at the token endpoint fetched within their own limit, a failing
 *   one fetched once (not once per request, not twice per request), an IPv6 spelling of loopback
 *   refused with no connection;
 * - the operator log under a registration flood: one line for the source, not one per client;
 * - two replicas (two CLI processes) on one store, SQLite file, PostgreSQL and Redis, admitting
 *   together what one admits.
 */
import { once } from "node:events";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open-ledger.js";
import type { LedgerStore } from "../../src/ledger/store.js";
import { isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";
import { selfSignedCert } from "../helpers/oauth-flow.js";
import { authorizationUrl, pkce, register } from "../helpers/oauth-hosts.js";
import { type DocumentHost, startDocumentHost, tokenStore } from "../helpers/oauth-server.js";
import { available, freePort, freshStore, STORE_KINDS, type StoreFixture } from "../ledger/stores.js";

const REDIRECT = "https://host.example/callback";
const SECRET = Buffer.alloc(32, 31).toString("base64");

/** One replica of `--auth oauth --sandbox` on `port`, the public URL `issuer`, over `store`. */
function replica(
  env: Record<string, string>,
  issuer: string,
  port: number,
  extra: Record<string, string> = {},
) {
  return startHttpCli(["--sandbox", "--auth", "oauth", "--port", String(port)], {
    ...env,
    GENERATION_PUBLIC_URL: issuer,
    GENERATION_AUTH_SECRET: SECRET,
    GENERATION_TRUSTED_PROXIES: "127.0.0.1",
    // The routes' own limits are tested here, in bursts; the strangers' share, in admission-cli.test.ts.
    GENERATION_HTTP_LIMITS: "anonymousPerSecond=100000,anonymousInFlight=10000",
    ...extra,
  });
}

const send = (url: string, method: string, from: string, body?: unknown) =>
  fetch(url, {
    method,
    redirect: "manual",
    headers: {
      "x-forwarded-for": from,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe("spellings, fetches and the log through the built CLI", () => {
  const iso = isolatedEnv();
  let cli: Started;
  let issuer: string;
  let store: LedgerStore;
  let documents: DocumentHost;

  beforeAll(async () => {
    const tls = selfSignedCert(iso.dir);
    documents = await startDocumentHost(tls);
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    cli = await replica(iso.env, issuer, port, { NODE_EXTRA_CA_CERTS: tls.certPath });
    store = await openStore(String(iso.env.GENERATION_STORE));
  }, 60_000);
  afterAll(async () => {
    await cli?.stop();
    await store?.close();
    await documents?.close();
    iso.cleanup();
  });

  it("registrations under every spelling share one limit per address; unserved spellings store nothing; one log line", async () => {
    const before = await tokenStore(store).size("Client");
    const spellings = ["/oauth/register", "/oauth/register/", "/oauth/Register", "/oauth/REGISTER/"];
    const all = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        send(`${issuer}${spellings[i % 4]}`, "POST", "203.0.113.50", {
          client_name: `Spelled ${i}`,
          redirect_uris: [REDIRECT],
        }),
      ),
    );
    const stored = all.filter((r) => r.status === 201).length;
    expect(all.every((r) => r.status === 201 || r.status === 429)).toBe(true);
    // A fixed minute: 20, or up to 40 if the flood spans a window's edge.
    expect(stored).toBeGreaterThanOrEqual(20);
    expect(stored).toBeLessThanOrEqual(40);
    const unserved = await Promise.all(
      ["/oauth/register//", "/oauth/reg%69ster", "/oauth/par", "/oauth/PAR/", "/oauth/register/x"].map((p) =>
        send(`${issuer}${p}`, "POST", "203.0.113.51", { redirect_uris: [REDIRECT] }),
      ),
    );
    expect(unserved.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    expect((await tokenStore(store).size("Client")).rows - before.rows).toBe(stored);
    const lines = cli.stderr().split("\n");
    expect(lines.filter((l) => /client registered: .*"Spelled/.test(l))).toHaveLength(1);
  });

  it("authorization requests under every spelling and HEAD share one limit per address", async () => {
    const reg = await register(issuer, { client_name: "Spelled", redirect_uris: [REDIRECT] }, "203.0.113.60");
    const clientId = String(reg.body.client_id);
    const query = new URL(
      authorizationUrl(issuer, { clientId, redirectUri: REDIRECT, challenge: pkce().challenge }),
    ).search;
    const interactions = () => tokenStore(store).size("Interaction");
    const before = await interactions();
    const variants: Array<[string, string]> = [
      ["GET", "/oauth/authorize"],
      ["GET", "/oauth/authorize/"],
      ["GET", "/oauth/AUTHORIZE"],
      ["HEAD", "/oauth/authorize"],
    ];
    const all = await Promise.all(
      Array.from({ length: 200 }, (_, i) => {
        const [method, path] = variants[i % 4] as [string, string];
        return send(`${issuer}${path}${query}`, method, "203.0.113.61");
      }),
    );
    const shown = all.filter((r) => r.status === 303).length;
    expect(all.every((r) => r.status === 303 || r.status === 429)).toBe(true);
    expect(shown).toBeGreaterThanOrEqual(60);
    expect(shown).toBeLessThanOrEqual(120);
    expect((await interactions()).rows - before.rows).toBeLessThanOrEqual(shown);
    expect((await send(`${issuer}/oauth/authorize${query}`, "POST", "203.0.113.62")).status).toBe(405);
    // The refusal of response modes other than query holds in every spelling too.
    for (const path of ["/oauth/authorize", "/oauth/AUTHORIZE/"]) {
      const res = await send(`${issuer}${path}${query}&response_mode=form_post`, "GET", "203.0.113.63");
      expect(res.status, path).toBe(400);
      expect(await res.text()).toContain("response_mode=query");
    }
  });

  it("sign-in posts under every spelling share one limit per address", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 70; i++) {
      const path = i % 2 ? "/oauth/sign-in/abc" : "/oauth/sign-in/abc/";
      statuses.push((await send(`${issuer}${path}`, "POST", "203.0.113.70")).status);
    }
    // Counted, then answered "expired" (400) as no sign-in is under way; over the limit, 429.
    const admitted = statuses.filter((s) => s !== 429).length;
    expect(statuses.every((s) => s === 400 || s === 429)).toBe(true);
    expect(admitted).toBeGreaterThanOrEqual(30);
    expect(admitted).toBeLessThanOrEqual(60);
    // Another case is not this server's sign-in page: refused by the provider's routes, unserved.
    expect((await send(`${issuer}/oauth/Sign-In/abc`, "POST", "203.0.113.71")).status).toBe(404);
  });

  it("the token endpoint's document fetches are limited; a failing document is fetched once; loopback spelled in IPv6 is never connected to", async () => {
    const token = (clientId: string, from: string) =>
      fetch(`${issuer}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": from },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: "nothing",
          redirect_uri: REDIRECT,
          code_verifier: pkce().verifier,
          client_id: clientId,
        }).toString(),
      });
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => token(documents.url(`/distinct-${i}.json`), "203.0.113.80")),
    );
    const fetched = Array.from({ length: 60 }, (_, i) => documents.fetches(`/distinct-${i}.json`));
    expect(fetched.every((n) => n <= 1)).toBe(true);
    const total = fetched.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(20);
    expect(total).toBeLessThanOrEqual(40);
    const limited = answers.filter((r) => r.status === 429);
    expect(limited.length).toBe(60 - total);
    const described = (await limited[0]?.json()) as { error_description?: string } | undefined;
    expect(described?.error_description).toContain(
      "Too many client metadata document fetches: at most 20 a minute from one address",
    );
    expect(Date.now() - started).toBeLessThan(10_000);

    // A missing document: one fetch for this request, none for the next (the failure is remembered).
    const missing = documents.url("/missing-at-token.json");
    const t0 = Date.now();
    expect((await token(missing, "203.0.113.81")).status).toBeGreaterThanOrEqual(400);
    expect((await token(missing, "203.0.113.81")).status).toBeGreaterThanOrEqual(400);
    expect(documents.fetches("/missing-at-token.json")).toBe(1);
    const auth = documents.url("/missing-at-authorize.json");
    await send(
      authorizationUrl(issuer, { clientId: auth, redirectUri: REDIRECT, challenge: pkce().challenge }),
      "GET",
      "203.0.113.81",
    );
    expect(documents.fetches("/missing-at-authorize.json")).toBe(1);
    expect(Date.now() - t0).toBeLessThan(5_000);

    let connections = 0;
    const count = (s: Socket) => {
      connections++;
      s.destroy();
    };
    const v4 = createServer(count).listen(0, "127.0.0.1");
    await once(v4, "listening");
    const port = (v4.address() as AddressInfo).port;
    for (const host of ["[::7f00:1]", "[::127.0.0.1]", "[64:ff9b::7f00:1]", "[::ffff:0:7f00:1]"]) {
      const res = await token(`https://${host}:${port}/c.json`, "203.0.113.82");
      expect(res.status, host).toBeGreaterThanOrEqual(400);
    }
    v4.close();
    expect(connections).toBe(0);
  });
});

describe.each(STORE_KINDS)("two replicas on one %s store", (kind) => {
  const iso = isolatedEnv();
  let fixture: StoreFixture | undefined;
  let replicas: Started[] = [];

  beforeAll(async () => {
    if (!(await available(kind))) return;
    fixture = await freshStore(kind);
    const env = { ...iso.env, GENERATION_STORE: fixture.uri };
    // The first serves on the issuer's own port: a free port may be taken by another test before it
    // binds, so another is tried. The second, any port (a Host of the issuer's name is accepted on
    // any). One at a time: the first makes the signing key the second then reads.
    let issuer = "";
    for (let attempt = 0; replicas.length === 0; attempt++) {
      const port = await freePort();
      issuer = `http://127.0.0.1:${port}`;
      const first = await replica(env, issuer, port).catch((err: unknown) => {
        if (attempt >= 2 || !/already in use/.test(String(err))) throw err;
        return undefined;
      });
      if (first !== undefined) replicas.push(first);
    }
    replicas.push(await replica(env, issuer, 0));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    replicas = [];
    await fixture?.cleanup();
    iso.cleanup();
  });

  it("admit together what one admits: registrations per address and per deployment", async (ctx) => {
    if (replicas.length < 2) return ctx.skip();
    const origin = (i: number) => new URL((replicas[i % 2] as Started).url).origin;
    const post = (i: number, from: string) =>
      register(origin(i), { client_name: `Replica ${i}`, redirect_uris: [REDIRECT] }, from);
    const one = await Promise.all(Array.from({ length: 60 }, (_, i) => post(i, "203.0.113.90")));
    const fromOne = one.filter((r) => r.status === 201).length;
    expect(fromOne).toBeGreaterThanOrEqual(20);
    expect(fromOne).toBeLessThanOrEqual(40);
    const many = await Promise.all(
      Array.from({ length: 400 }, (_, i) => post(i, `198.18.${i >> 8}.${i & 255}`)),
    );
    const fromMany = many.filter((r) => r.status === 201).length;
    process.stdout.write(
      `two replicas on ${kind}: one address ${fromOne} of 60 stored, 400 addresses ${fromMany} of 400 stored\n`,
    );
    // One replica admits 120 a minute in all (240 across a window's edge); two admit no more.
    expect(fromOne + fromMany).toBeLessThanOrEqual(240);
    expect(many.some((r) => String(r.body.error_description).includes("a minute on this deployment"))).toBe(
      true,
    );
  });
});
