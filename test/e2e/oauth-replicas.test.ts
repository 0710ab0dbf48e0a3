/**
 * `--auth oauth` on the deployment docs/oauth.md describes: three replicas of the built CLI on one
 * PostgreSQL store behind HAProxy with a TLS front (self-signed here), against a sandbox over
 * loopback. A host signs in through the balancer (each step of the flow lands on whichever replica
 * round robin picks), then its token is used on one replica, refreshed on another and revoked on
 * a third; a refresh token reused within the grace refreshes again on another replica, after it
 * revokes the family everywhere; a key the service later refuses
 * ends the sign-in on every replica; a key without `read` is refused by name; a CIMD document on
 * loopback is refused outside testing; and no byte of the shared store holds a key.
 */

import type { Browser } from "playwright-core";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKEN_RECHECK_MS } from "../../src/transports/oauth/token-checks.js";
import { chromiumMissing, launchChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, type Started } from "../helpers/cli.js";
import {
  approve,
  connectWithOAuth,
  type FetchLike,
  initializeStatus,
  MemoryOAuthProvider,
  openSignIn,
  postForm,
  selfSignedCert,
  startCallback,
} from "../helpers/oauth-flow.js";
import { available, freePort } from "../ledger/stores.js";
import { type Deployment, haproxyInstalled, startDeployment } from "./balancer.js";

const ready = runnableOrSkipped(
  haproxyInstalled() ? chromiumMissing() : "haproxy is not installed (apt-get install haproxy)",
  "the OAuth replica tests (test/e2e/oauth-replicas.test.ts)",
);

const SECRET = Buffer.alloc(32, 9).toString("base64");
const iso = isolatedEnv();
let d: Deployment | undefined;
let browser: Browser;
let callback: Awaited<ReturnType<typeof startCallback>>;
let issuer: string;
let tlsFetch: FetchLike;
/** Every key made for these tests, looked for in the store at the end. */
const keys: string[] = [];
const newKey = (scopes: Array<"read" | "generate">): string => {
  const key = (d as Deployment).sandbox.addKey({ scopes });
  keys.push(key);
  return key;
};

/** The replica's own address (plain http on loopback, behind the balancer). */
const direct = (i: number) => new URL(((d as Deployment).replicas[i] as Started).url).origin;

const mcpStatus = (origin: string, token: string) => initializeStatus(`${origin}/mcp`, token);

/** Milliseconds from `since` until `origin` answers 401 to `token` (polled; other answers must be 200). */
async function refusedAfter(origin: string, token: string, since: number): Promise<number> {
  for (;;) {
    const status = await mcpStatus(origin, token);
    if (status === 401) return Date.now() - since;
    expect(status).toBe(200);
    if (Date.now() - since > 3 * TOKEN_RECHECK_MS) return Date.now() - since;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function signIn(name: string, apiKey: string) {
  const provider = new MemoryOAuthProvider(callback.url, name);
  const client = await connectWithOAuth(
    `${issuer}/mcp`,
    provider,
    async (url) => approve(await openSignIn(browser, url, true), callback, { key: apiKey }),
    tlsFetch,
  );
  return { provider, client, clientId: String(provider.info?.client_id) };
}

beforeAll(async () => {
  if (!ready || !(await available("postgres"))) return;
  const tls = selfSignedCert(iso.dir);
  const agent = new Agent({ connect: { ca: tls.cert } });
  tlsFetch = (url, init) =>
    undiciFetch(url, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>;
  const port = await freePort();
  issuer = `https://localhost:${port}`;
  d = await startDeployment({
    env: {
      GENERATION_AUTH: "oauth",
      GENERATION_PUBLIC_URL: issuer,
      GENERATION_AUTH_SECRET: SECRET,
      // Short, so the test reaches a reuse after it.
      GENERATION_AUTH_REFRESH_GRACE: "2s",
    },
    doc: "oauth",
    port,
    tls,
  });
  callback = await startCallback();
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await callback?.close();
  await d?.stop();
  iso.cleanup();
});

describe.runIf(ready)(
  "--auth oauth on three replicas behind HAProxy's TLS front, one PostgreSQL store",
  () => {
    it("the front runs docs/oauth.md's file as written, and its health check passes on every replica", async (ctx) => {
      if (d === undefined) return ctx.skip();
      expect(d.balancer.config).toMatch(/^ {2}option httpchk$/m);
      expect(d.balancer.config).toMatch(/^ {2}option forwardfor\b/m);
      expect(await d.balancer.servers()).toEqual(
        ["r1", "r2", "r3"].map((name) => ({ name, status: "UP", check: "L7OK" })),
      );
    });

    it("signed in through the balancer; the token works on one replica, refreshes on another, is revoked on a third and refused on the others within the revocation bound", async (ctx) => {
      if (d === undefined) return ctx.skip();
      const key = newKey(["read", "generate"]);
      const { provider, client, clientId } = await signIn("Replica Host", key);
      const paid = await client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt: "three harbours, one sign-in", wait: 0 },
      });
      expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
      await client.close();
      const access = String(provider.saved?.access_token);
      for (let i = 0; i < 3; i++) expect(await mcpStatus(direct(i), access)).toBe(200);

      const refreshed = await postForm(`${direct(2)}/oauth/token`, {
        grant_type: "refresh_token",
        refresh_token: String(provider.saved?.refresh_token),
        client_id: clientId,
      });
      expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
      const fresh = String(refreshed.body.access_token);
      expect(await mcpStatus(direct(1), fresh)).toBe(200);

      const revoked = await postForm(`${direct(0)}/oauth/revoke`, {
        token: String(refreshed.body.refresh_token),
        client_id: clientId,
      });
      expect(revoked.status).toBe(200);
      const at = Date.now();
      // The replica that revoked refuses at once; the others checked both tokens just now, and
      // refuse them once that check is older than the bound (token-checks.ts, docs/oauth.md).
      expect(await mcpStatus(direct(0), fresh)).toBe(401);
      expect(await mcpStatus(direct(0), access)).toBe(401);
      for (let i = 1; i < 3; i++) {
        expect(await refusedAfter(direct(i), fresh, at)).toBeLessThanOrEqual(TOKEN_RECHECK_MS + 500);
        expect(await refusedAfter(direct(i), access, at)).toBeLessThanOrEqual(TOKEN_RECHECK_MS + 500);
      }
    });

    it("a refresh token reused on another replica: within the grace it refreshes again, after it the family is revoked on all", async (ctx) => {
      if (d === undefined) return ctx.skip();
      const key = newKey(["read", "generate"]);
      const { provider, client, clientId } = await signIn("Reuse Host", key);
      await client.close();
      const old = String(provider.saved?.refresh_token);
      const rotated = await postForm(`${direct(0)}/oauth/token`, {
        grant_type: "refresh_token",
        refresh_token: old,
        client_id: clientId,
      });
      expect(rotated.status).toBe(200);
      const reuse = (replica: number) =>
        postForm(`${direct(replica)}/oauth/token`, {
          grant_type: "refresh_token",
          refresh_token: old,
          client_id: clientId,
        });
      const retried = await reuse(1);
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      expect(await mcpStatus(direct(2), String(retried.body.access_token))).toBe(200);
      await new Promise((r) => setTimeout(r, 2_200));
      const reused = await reuse(2);
      expect(reused.body.error).toBe("invalid_grant");
      expect(await mcpStatus(direct(0), String(retried.body.access_token))).toBe(401);
      for (let i = 0; i < 3; i++)
        expect(await mcpStatus(direct(i), String(rotated.body.access_token))).toBe(401);
    });

    it("a key the service revokes ends the sign-in: the call says INVALID_API_KEY, then every replica answers 401", async (ctx) => {
      if (d === undefined) return ctx.skip();
      const key = newKey(["read", "generate"]);
      const { provider, client } = await signIn("Revoked Key Host", key);
      expect((await client.callTool({ name: "list_models", arguments: {} })).isError).toBeFalsy();
      d.sandbox.revokeKey(key);
      const refused = await client.callTool({ name: "list_models", arguments: {} });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain("INVALID_API_KEY");
      await client.close().catch(() => undefined);
      const token = String(provider.saved?.access_token);
      // The grant is deleted once the refusal is seen; allow the write a moment to land.
      for (let tries = 0; tries < 50 && (await mcpStatus(direct(0), token)) !== 401; tries++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      for (let i = 0; i < 3; i++) expect(await mcpStatus(direct(i), token)).toBe(401);
    });

    it("a key without the read scope is refused on the sign-in page, which names the scope", async (ctx) => {
      if (d === undefined) return ctx.skip();
      const generateOnly = newKey(["generate"]);
      const provider = new MemoryOAuthProvider(callback.url, "Scope Host");
      const outcome = await connectWithOAuth(
        `${issuer}/mcp`,
        provider,
        async (url) => {
          const page = await openSignIn(browser, url, true);
          await page.fill("#key", generateOnly);
          await page.click('button[value="allow"]');
          const html = await page.content();
          expect(html).toContain("This key lacks the read scope");
          expect(html).not.toContain(generateOnly.slice(4, 20));
          await page.context().close();
          throw new Error("refused");
        },
        tlsFetch,
      ).catch((e: Error) => e.message);
      expect(outcome).toBe("refused");
    });

    it("each replica's start message offers hosts the public URL only, never its own loopback address", (ctx) => {
      if (d === undefined) return ctx.skip();
      for (const replica of d.replicas) {
        const out = replica.stdout();
        expect(out).toContain(
          `Connector URL, for claude.ai, Claude Desktop (Settings → Connectors → Add custom connector), ChatGPT and every other host: ${issuer}/mcp`,
        );
        expect(out).not.toMatch(/http:\/\/127\.0\.0\.1:\d+\/mcp/);
        expect(out).toContain(`listening on ${new URL(replica.url).host} for ${issuer}/mcp`);
      }
    });

    it("a CIMD document on loopback is refused when the public URL is https (not testing)", async (ctx) => {
      if (d === undefined) return ctx.skip();
      const params = new URLSearchParams({
        response_type: "code",
        client_id: "https://localhost:9/client.json",
        redirect_uri: callback.url,
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
      });
      const res = await fetch(`${direct(1)}/oauth/authorize?${params}`, { redirect: "manual" });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("private, loopback or reserved address");
    });

    it("no byte of the shared store holds a key", async (ctx) => {
      if (d === undefined) return ctx.skip();
      const pg = (await import("pg")).default;
      const db = new pg.Client({ connectionString: d.store.uri });
      await db.connect();
      try {
        const { rows } = await db.query("SELECT key, value::text AS v FROM generation_mcp_ledger");
        const text = rows
          .map((r: { key: string; v: string }) => `${r.key} ${r.v}`)
          .join("\n")
          .toLowerCase();
        expect(text).toContain("oauth:account:");
        expect(keys.length).toBeGreaterThan(3);
        for (const k of keys) expect(text.includes(k.slice(4, 20))).toBe(false);
        expect(text).not.toMatch(/lgk_/);
      } finally {
        await db.end();
      }
    });
  },
);
