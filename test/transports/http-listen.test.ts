/**
 * 2026-07-28 `subscriptions/listen` streams are bounded over the whole server: each request is
 * served by a handler of its own (built over the request's engine), so the bound is the HTTP
 * server's, counted from a stream's opening to the end of its exchange.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpServerHandle, startHttpServer } from "../../src/transports/http-server.js";

const KEY = `lgk_${"c".repeat(64)}`;
let handle: HttpServerHandle;

beforeAll(async () => {
  handle = await startHttpServer({
    host: "127.0.0.1",
    port: 0,
    engineFor: () => ({ keyHash: "hash-c" }),
    createServer: () =>
      new McpServer({ name: "probe", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } }),
    maxSubscriptions: 2,
  });
});
afterAll(() => handle.close());

async function modernClient(): Promise<Client> {
  const client = new Client(
    { name: "listener", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(handle.url), {
      requestInit: { headers: { authorization: `Bearer ${KEY}` } },
    }),
  );
  return client;
}

describe("subscriptions/listen on 2026-07-28", () => {
  it("keeps at most the server's bound of streams open, and makes room when one ends", async () => {
    const clients = await Promise.all([modernClient(), modernClient(), modernClient()]);
    try {
      const [a, b, c] = clients as [Client, Client, Client];
      const first = await a.listen({ toolsListChanged: true });
      const second = await b.listen({ toolsListChanged: true });
      await expect(c.listen({ toolsListChanged: true })).rejects.toThrow(/Subscription limit reached/);
      await first.close();
      // The ended stream's exchange closes on the server a moment later.
      let third: Awaited<ReturnType<Client["listen"]>> | undefined;
      for (let i = 0; i < 50 && third === undefined; i++) {
        third = await c.listen({ toolsListChanged: true }).catch(async () => {
          await new Promise((r) => setTimeout(r, 20));
          return undefined;
        });
      }
      expect(third).toBeDefined();
      await second.close();
      await third?.close();
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });
});
