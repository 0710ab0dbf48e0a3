/**
 * One MCP server for one API key: every tool of tools/ and every resource, over an Engine.
 * Transports (stdio, HTTP) build the Engine and call this; nothing here knows about them.
 */
import { McpServer } from "@modelcontextprotocol/server";
import type { Engine } from "../tooling/context.js";
import { registerTool } from "../tooling/tool.js";
import { CATALOG } from "../tools/catalog.js";
import { TOOL_LOADERS } from "../tools/index.js";
import { registerPrompts } from "./prompts.js";
import { registerResources } from "./resources.js";

export const SERVER_NAME = "generation-mcp";
export const SERVER_VERSION = "0.1.0";

const INSTRUCTIONS = `Generates images, video, speech, music, text and video analyses on a paid service; every generation spends Gems from the user's key.
Start with list_models. Generation tools wait a bounded time and return the task as it stands: keep its task ID and identity (idempotencyKey), and follow it with poll_task rather than submitting again. A cut-off or failed call is safe to repeat with the same arguments (or idempotencyKey): it replays, never charging twice. list_requests shows this key's requests if a task ID was lost.`;

export function createMcpServer(engine: Engine): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    { instructions: INSTRUCTIONS, capabilities: { tools: {}, resources: {}, prompts: {}, completions: {} } },
  );
  for (const listed of CATALOG) {
    const load = TOOL_LOADERS[listed.name];
    if (!load) throw new Error(`tools/catalog.ts lists ${listed.name}, which tools/index.ts does not load`);
    registerTool(server, engine, listed, async () => (await load()).default);
  }
  registerResources(server, engine);
  registerPrompts(server, engine);
  return server;
}
