/**
 * The HTTP server's pools and their fair shares (src/shared/fair-shares.ts): slots claimed before
 * any await (a parallel burst never overshoots), a newcomer served when a few keys fill the session
 * table, and request bodies held within a memory budget, each refusal naming its limit and when to
 * retry.
 */
import { request } from "node:http";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { Channel } from "../../src/mcp/delivery.js";
import { Sessions } from "../../src/transports/http-sessions.js";
import { engineOf, hash, INIT, startProbe, whoami, whoamiServer } from "./http-probe.js";

const key = (c: string) => `lgk_${c.repeat(64)}`;

function init(url: string, apiKey: string) {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${apiKey}`,
    },
    body: INIT,
  });
}

/** A session that made a successful call (so it is never evicted as unproven). */
async function provenSession(url: string, apiKey: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    }),
  );
  expect(await whoami(client)).toBe(hash(apiKey));
  return client;
}

describe("session slots are claimed before any await", () => {
  it("opens started in one tick, whose server takes a while to build, never pass the caps", async () => {
    // The server factory awaits (as createMcpServer's imports do): a cap counted after it would
    // let every open of the burst through.
    const slow = async (engine: { keyHash: string }, channel: Parameters<typeof whoamiServer>[1]) => {
      await new Promise((r) => setTimeout(r, 20));
      return whoamiServer(engine, channel);
    };
    const sessions = new Sessions(slow, () => {}, { maxPerKey: 5, maxSessions: 8 });
    const open = (k: string) =>
      sessions.serve(
        new Request("http://127.0.0.1/mcp", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        }),
        engineOf(key(k)),
        new Channel(() => {}),
        JSON.parse(INIT),
      );
    const statuses = (await Promise.all([...Array(20).fill("a"), ...Array(20).fill("b")].map(open))).map(
      (r) => r.status,
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(8);
    expect(sessions.size).toBe(8);
    expect(sessions.claimed).toBe(8);
    await sessions.closeAll();
    expect(sessions.claimed).toBe(0);
  });

  it("a burst of parallel initialize under one key opens exactly its share", async () => {
    const h = await startProbe({
      sessions: { maxPerKey: 5, maxSessions: 50 },
    });
    try {
      const statuses = (await Promise.all(Array.from({ length: 40 }, () => init(h.url, key("a"))))).map(
        (r) => r.status,
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(5);
      expect(statuses.filter((s) => s === 503)).toHaveLength(35);
      expect(h.sessionCount()).toBe(5);
    } finally {
      await h.close();
    }
  });

  it("a burst over many keys never leaves more sessions than the total", async () => {
    const h = await startProbe({
      sessions: { maxPerKey: 100, maxSessions: 10 },
    });
    try {
      const keys = "0123456789abcdef".split("");
      await Promise.all(keys.flatMap((k) => [init(h.url, key(k)), init(h.url, key(k))]));
      expect(h.sessionCount()).toBeLessThanOrEqual(10);
    } finally {
      await h.close();
    }
  });
});

describe("session fair shares", () => {
  it("a key holding the whole table gives way to a newcomer, down to an even split", async () => {
    const h = await startProbe({
      sessions: { maxPerKey: 6, maxSessions: 6 },
    });
    const clients: Client[] = [];
    try {
      for (let i = 0; i < 6; i++) clients.push(await provenSession(h.url, key("a")));
      // B is served three times, each time by closing A's least recently used session.
      for (let i = 0; i < 3; i++) clients.push(await provenSession(h.url, key("b")));
      expect(h.sessionCount()).toBe(6);
      // At three each, neither takes from the other: B's fourth is refused, naming the limit.
      const refused = await init(h.url, key("b"));
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
        /limit 6, sessions\).*retry after \d+ s/,
      );
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await h.close();
    }
  });
});

describe("subscriptions/listen shares", () => {
  it("one key cannot take every stream; another key still gets one", async () => {
    const h = await startProbe({
      limits: { listens: 3, listensPerKey: 1 },
    });
    const modern = async (apiKey: string) => {
      const client = new Client(
        { name: "listener", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(h.url), {
          requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
        }),
      );
      return client;
    };
    const [a1, a2, b] = await Promise.all([modern(key("a")), modern(key("a")), modern(key("b"))]);
    try {
      const first = await a1.listen({ toolsListChanged: true });
      await expect(a2.listen({ toolsListChanged: true })).rejects.toThrow(
        /1 listen streams for this key \(listensPerKey\); close one or retry after \d+ s/,
      );
      const other = await b.listen({ toolsListChanged: true });
      await first.close();
      await other.close();
    } finally {
      await Promise.all([a1, a2, b].map((c) => c.close()));
      await h.close();
    }
  });
});

/** A POST whose body is declared but only partly sent: it holds its reservation until aborted. */
function heldBody(port: number, apiKey: string, bytes: number) {
  const req = request({
    host: "127.0.0.1",
    port,
    path: "/mcp",
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${apiKey}`,
      "content-length": String(bytes),
    },
  });
  req.on("error", () => {});
  req.write("{");
  return req;
}

const post = (url: string, apiKey: string, body: string) =>
  fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${apiKey}`,
    },
    body,
  });

describe("request bodies within a memory budget", () => {
  it("refuses with 503 and Retry-After past the key's share and past the total, then makes room", async () => {
    const h = await startProbe({
      limits: { bodyMiB: 2, bodyMiBPerKey: 1 },
    });
    try {
      const big = JSON.stringify({ pad: "x".repeat(1_200_000) });
      const own = await post(h.url, key("a"), big);
      expect(own.status).toBe(503);
      expect(own.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(((await own.json()) as { error: { message: string } }).error.message).toMatch(
        /for this key .*bodyMiBPerKey, 1 MiB\); retry after \d+ s/,
      );

      const holders = [heldBody(h.port, key("b"), 1_000_000), heldBody(h.port, key("c"), 1_000_000)];
      await new Promise((r) => setTimeout(r, 200));
      const total = await post(h.url, key("d"), JSON.stringify({ pad: "y".repeat(300_000) }));
      expect(total.status).toBe(503);
      expect(((await total.json()) as { error: { message: string } }).error.message).toMatch(
        /bodyMiB, 2 MiB/,
      );

      for (const r of holders) r.destroy();
      await new Promise((r) => setTimeout(r, 200));
      expect((await init(h.url, key("d"))).status).toBe(200);
    } finally {
      await h.close();
    }
  });
});

describe("a request whose body is not for the budget", () => {
  it("is answered at once with its body unread (it would be held outside the budget): 415, or 400 for a GET or DELETE", async () => {
    const h = await startProbe();
    try {
      const status = await new Promise<number | undefined>((resolve) => {
        const req = request(
          {
            host: "127.0.0.1",
            port: h.port,
            path: "/mcp",
            method: "POST",
            headers: {
              "content-type": "text/plain",
              authorization: `Bearer ${key("a")}`,
              "content-length": String(40 * 1024 * 1024),
            },
          },
          (res) => resolve(res.statusCode),
        );
        req.on("error", () => resolve(undefined));
        // One byte of the 40 MiB declared: the answer comes without the rest.
        req.write("x");
      });
      expect(status).toBe(415);
      const del = await fetch(h.url, {
        method: "DELETE",
        headers: { authorization: `Bearer ${key("a")}`, "mcp-session-id": "x" },
        body: "y".repeat(100_000),
      });
      expect(del.status).toBe(400);
      expect(((await del.json()) as { error: { message: string } }).error.message).toMatch(
        /DELETE to \/mcp carries no body/,
      );
    } finally {
      await h.close();
    }
  });
});
