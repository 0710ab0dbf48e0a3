/**
 * The one-tool MCP server the HTTP transport's tests run behind it (http.test.ts,
 * http-sessions.test.ts): it answers with the hash of the key it was created for, and a second tool
 * records how the exchange that carried it settled its delivery.
 */
import type { Client } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { DeliveryChannel } from "../../src/mcp/delivery.js";
import {
  type HttpServerHandle,
  type HttpServerOptions,
  startHttpServer,
} from "../../src/transports/http-server.js";

export const KEY_A = `lgk_${"a".repeat(64)}`;
export const KEY_B = `lgk_${"b".repeat(64)}`;
export const KEY_ENV = `lgk_${"e".repeat(64)}`;
export const hash = (key: string) => `hash-${key.slice(4, 8)}`;
/** The engine a key is given where it arrives: here only its hash. */
export const engineOf = (key: string) => ({ keyHash: hash(key) });
/** What the "channel" tool's delivery hooks were settled with, in order. */
export const deliveriesSettled: boolean[] = [];

export function whoamiServer(engine: { keyHash: string }, channel: DeliveryChannel): McpServer {
  const server = new McpServer({ name: "probe", version: "1.0.0" });
  server.registerTool(
    "whoami",
    { description: "the key hash", inputSchema: z.object({}) },
    async (_args, ctx) => {
      // As the real tools do (src/mcp/define-tool.ts): a call that worked tells its channel.
      channel.succeeded(ctx.mcpReq.id);
      return { content: [{ type: "text", text: engine.keyHash }] };
    },
  );
  server.registerTool(
    "channel",
    {
      description: "a delivery hook, settled by the exchange that carried the call",
      inputSchema: z.object({}),
    },
    async (_args, ctx) => {
      channel.expect(ctx.mcpReq.id, [
        async (delivered) => {
          deliveriesSettled.push(delivered);
        },
      ]);
      return { content: [{ type: "text", text: "expected" }] };
    },
  );
  return server;
}

export const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

export async function whoami(client: Client): Promise<string> {
  const result = await client.callTool({ name: "whoami", arguments: {} });
  const first = (result.content as { text: string }[])[0];
  return first?.text ?? "";
}

/**
 * The HTTP transport on loopback on a free port, one whoami server per key (`engineOf`), with
 * `options` for what a test sets besides.
 */
export function startProbe(
  options: Partial<HttpServerOptions<{ keyHash: string }>> = {},
): Promise<HttpServerHandle> {
  return startHttpServer({
    host: "127.0.0.1",
    port: 0,
    engineFor: engineOf,
    createServer: whoamiServer,
    ...options,
  });
}
