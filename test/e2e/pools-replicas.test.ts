/**
 * Two replicas of the built CLI over loopback HTTP on one ledger store (a shared SQLite file, and
 * PostgreSQL): one key's sessions and listen streams, opened on either replica and in parallel
 * bursts on both at once, are capped at its share per deployment (GENERATION_HTTP_LIMITS'
 * sessionsPerKey, listensPerKey), each refusal naming the limit and when to retry, while another key
 * is still served on both; a unit given back on one replica can be taken on the other.
 */

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { initializeRequest, isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";
import { available, freshStore, type StoreFixture } from "../ledger/stores.js";

const SESSIONS_PER_KEY = 3;
const LISTENS_PER_KEY = 2;

let sandbox: Sandbox;
let baseUrl: string;
let closeSandbox: () => Promise<void>;

beforeAll(async () => {
  sandbox = createSandbox({ timeScale: 50 });
  const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  baseUrl = listening.url;
  closeSandbox = listening.close;
});
afterAll(async () => {
  await closeSandbox?.();
  await sandbox?.close();
});

const init = (url: string, key: string) =>
  fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${key}`,
    },
    body: JSON.stringify(initializeRequest("replica-burst")),
  });

const close = (url: string, key: string, id: string) =>
  fetch(url, {
    method: "DELETE",
    headers: { authorization: `Bearer ${key}`, "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" },
  });

async function modern(url: string, key: string): Promise<Client> {
  const client = new Client(
    { name: "listener", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

describe.each(["sqlite", "postgres"] as const)("two replicas on one %s store", (kind) => {
  const iso = isolatedEnv();
  let fixture: StoreFixture | undefined;
  const replicas: Started[] = [];
  const urls = () => replicas.map((r) => r.url);

  beforeAll(async () => {
    if (!(await available(kind))) return;
    fixture = await freshStore(kind);
    const env = {
      ...iso.env,
      GENERATION_BASE_URL: baseUrl,
      GENERATION_STORE: fixture.uri,
      GENERATION_HTTP_LIMITS: `sessionsPerKey=${SESSIONS_PER_KEY},listensPerKey=${LISTENS_PER_KEY}`,
    };
    replicas.push(await startHttpCli([], env));
    replicas.push(await startHttpCli([], env));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await fixture?.cleanup();
    iso.cleanup();
  });

  it("a burst of opens on both replicas at once leaves one key its share in all; another key is served on both", async (ctx) => {
    if (fixture === undefined) return ctx.skip();
    const hog = sandbox.addKey({ scopes: ["read", "generate"] });
    const good = sandbox.addKey({ scopes: ["read", "generate"] });
    const [a, b] = urls() as [string, string];
    const burst = await Promise.all(Array.from({ length: 24 }, (_, i) => init(i % 2 ? a : b, hog)));
    const opened = burst.filter((r) => r.status === 200);
    expect(opened).toHaveLength(SESSIONS_PER_KEY);
    const refused = burst.filter((r) => r.status === 503);
    expect(refused).toHaveLength(24 - SESSIONS_PER_KEY);
    expect(refused.every((r) => /^\d+$/.test(r.headers.get("retry-after") ?? ""))).toBe(true);
    const messages = await Promise.all(
      refused.map(async (r) => ((await r.json()) as { error: { message: string } }).error.message),
    );
    // Past the share on the deployment (or, for a burst on one replica, already on that one).
    expect(messages.some((m) => /on all replicas together \(limit 3 per key, sessionsPerKey\)/.test(m))).toBe(
      true,
    );
    expect(messages.every((m) => /sessionsPerKey\); close one \(DELETE\) or retry after \d+ s/.test(m))).toBe(
      true,
    );

    // The other key opens on both replicas meanwhile.
    expect((await init(a, good)).status).toBe(200);
    expect((await init(b, good)).status).toBe(200);

    // One of the hog's sessions closed wherever it lives: the other replica may open one, once.
    const which = burst.indexOf(opened[0] as Response);
    const home = which % 2 ? a : b;
    const elsewhere = home === a ? b : a;
    expect((await close(home, hog, String(opened[0]?.headers.get("mcp-session-id")))).status).toBe(200);
    let reopened = 0;
    for (let i = 0; i < 50 && reopened === 0; i++) {
      if ((await init(elsewhere, hog)).status === 200) reopened++;
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(reopened).toBe(1);
    expect((await init(home, hog)).status).toBe(503);
    for (const r of replicas) expect(r.stderr()).not.toContain(hog);
  });

  it("one key's listen streams across both replicas stop at its share while another key listens", async (ctx) => {
    if (fixture === undefined) return ctx.skip();
    const hog = sandbox.addKey({ scopes: ["read", "generate"] });
    const good = sandbox.addKey({ scopes: ["read", "generate"] });
    const [a, b] = urls() as [string, string];
    const clients = await Promise.all([modern(a, hog), modern(b, hog), modern(a, hog), modern(b, hog)]);
    const others = await Promise.all([modern(a, good), modern(b, good)]);
    try {
      const [h1, h2, h3, h4] = clients as [Client, Client, Client, Client];
      const streams = [
        await h1.listen({ toolsListChanged: true }),
        await h2.listen({ toolsListChanged: true }),
      ];
      // Each replica alone would allow two more: the deployment does not.
      await expect(h3.listen({ toolsListChanged: true })).rejects.toThrow(
        /listen streams for this key on all replicas together \(listensPerKey\); close one or retry after 30 s/,
      );
      await expect(h4.listen({ toolsListChanged: true })).rejects.toThrow(/listensPerKey/);
      for (const g of others) streams.push(await g.listen({ toolsListChanged: true }));
      await Promise.all(streams.map((s) => s.close()));
    } finally {
      await Promise.all([...clients, ...others].map((c) => c.close().catch(() => {})));
    }
  });
});
