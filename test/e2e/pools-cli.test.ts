/**
 * The built CLI over loopback HTTP with small pools (GENERATION_HTTP_LIMITS): one key holding every
 * session slot, and bursting parallel opens on top, cannot keep a well-behaved key out: the
 * newcomer is served (the largest holder gives up its least recently used session), the burst is
 * refused naming the limit with Retry-After, and the operator's log says so once, not per refusal.
 * The same for 2026-07-28 listen streams and for request bodies held in memory.
 */

import { request } from "node:http";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { initializeRequest, isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";

let sandbox: Sandbox;
let closeSandbox: () => Promise<void>;
let server: Started;
let hog: string;
let good: string;
const iso = isolatedEnv();
const SESSIONS = 12;

beforeAll(async () => {
  sandbox = createSandbox({ timeScale: 50 });
  const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  closeSandbox = listening.close;
  hog = sandbox.addKey({ scopes: ["read", "generate"] });
  good = sandbox.addKey({ scopes: ["read", "generate"] });
  server = await startHttpCli([], {
    ...iso.env,
    GENERATION_BASE_URL: listening.url,
    GENERATION_HTTP_LIMITS: `sessions=${SESSIONS},sessionsPerKey=${SESSIONS},listens=4,listensPerKey=2,bodyMiB=4,bodyMiBPerKey=2`,
  });
});

afterAll(async () => {
  await server?.stop();
  await closeSandbox?.();
  await sandbox?.close();
  iso.cleanup();
});

/** A session that made a successful call, so it is never evicted as unproven. */
async function proven(key: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  const models = await client.callTool({ name: "list_models", arguments: {} });
  expect(models.isError).not.toBe(true);
  return client;
}

const rawInit = (key: string) =>
  fetch(server.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${key}`,
    },
    body: JSON.stringify(initializeRequest("burst")),
  });

describe("one key cannot take the session pool", () => {
  it("serves a well-behaved key while another holds every slot and bursts opens on top", async () => {
    const hogs: Client[] = [];
    const goods: Client[] = [];
    try {
      for (let i = 0; i < SESSIONS; i++) hogs.push(await proven(hog));
      const burst = await Promise.all(Array.from({ length: 30 }, () => rawInit(hog)));
      expect(burst.every((r) => r.status === 503)).toBe(true);
      const first = burst[0] as Response;
      expect(first.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(((await first.json()) as { error: { message: string } }).error.message).toMatch(
        /per key, sessionsPerKey\); close one \(DELETE\) or retry after \d+ s/,
      );

      // The newcomer is served, within its usual few hundred milliseconds.
      const started = performance.now();
      goods.push(await proven(good));
      expect(performance.now() - started).toBeLessThan(5_000);
      goods.push(await proven(good));
      // The hog, now below its share, bursts again: the table never holds more than its total.
      await Promise.all(Array.from({ length: 30 }, () => rawInit(hog)));
      const again = await goods[0]?.callTool({ name: "list_models", arguments: {} });
      expect(again?.isError).not.toBe(true);

      const logged = server
        .stderr()
        .split("\n")
        .filter((l) => l.includes("sessionsPerKey"));
      expect(logged.length).toBeGreaterThanOrEqual(1);
      expect(logged.length).toBeLessThanOrEqual(2);
      expect(server.stderr()).not.toContain(hog);
    } finally {
      await Promise.all([...hogs, ...goods].map((c) => c.close().catch(() => {})));
    }
  });
});

/** A 2026-07-28 client of `key` (sessionless). */
async function modern(key: string): Promise<Client> {
  const client = new Client(
    { name: "listener", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

describe("one key cannot take the listen streams", () => {
  it("refuses the hog's third stream naming listensPerKey while the other key opens one", async () => {
    const clients = await Promise.all([modern(hog), modern(hog), modern(hog), modern(good)]);
    const [h1, h2, h3, g] = clients as [Client, Client, Client, Client];
    try {
      const streams = [
        await h1.listen({ toolsListChanged: true }),
        await h2.listen({ toolsListChanged: true }),
      ];
      await expect(h3.listen({ toolsListChanged: true })).rejects.toThrow(/listensPerKey/);
      streams.push(await g.listen({ toolsListChanged: true }));
      await Promise.all(streams.map((s) => s.close()));
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
    }
  });
});

describe("one key cannot take the body budget", () => {
  it("refuses the hog's next body with 503 and Retry-After while the other key is served", async () => {
    const url = new URL(server.url);
    // The hog declares a 2 MiB body and sends a byte of it: its whole share is held.
    const held = request({
      host: url.hostname,
      port: url.port,
      path: "/mcp",
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${hog}`,
        "content-length": String(2 * 1024 * 1024),
      },
    });
    held.on("error", () => {});
    held.write("{");
    try {
      await new Promise((r) => setTimeout(r, 200));
      const refused = await rawInit(hog);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
        /bodyMiBPerKey, 2 MiB/,
      );
      const client = await proven(good);
      await client.close();
    } finally {
      held.destroy();
    }
  });
});
