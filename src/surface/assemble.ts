/**
 * One MCP server for one API key: every tool of tools/ and every resource, over an Engine.
 * Transports (stdio, HTTP) build the Engine and call this; nothing here knows about them.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { clientCapabilities, type Engine } from "../mcp/context.js";
import { registerTool } from "../mcp/define-tool.js";
import type { ChannelOf } from "../mcp/delivery.js";
import { TASKS_EXTENSION } from "../mcp/task-wire.js";
import { TOOL_LOADERS } from "../tools/all-tools.js";
import { CATALOG } from "../tools/catalog.js";
import { registerTasks } from "./mcp-tasks.js";
import { registerPrompts } from "./prompts.js";
import { registerResources } from "./resources.js";
import { mediaOrigins, registerViewer, viewerToolsFor } from "./viewer.js";

export const SERVER_NAME = "generation-mcp";
export const SERVER_VERSION = "0.1.0";

/**
 * Rules every tool shares, said once here rather than in each description (every assistant reads
 * all descriptions on every turn); each tool's description says what is its own.
 */
const INSTRUCTIONS = `Generates images, video, speech, music, text and video analyses on a paid service. generate_image, generate_video, generate_audio, chat and extract_video spend Gems from the user's key; every other tool is free.
Start with list_models (and list_voices for speech). upload_asset and upload_voice give the IDs that generation takes as references or voices.
Every paid call has an identity (idempotencyKey), returned with its result, and may cap its cost with maxGems (a higher quote or reservation is refused with PRICE_CHANGED). A call that was cut off, or whose outcome is unknown, is safe to repeat with the same arguments (or its identity): it replays and is not charged twice. Repeating a call whose result arrived is new work and spends again.
Generation tools wait up to \`wait\` seconds (default 45 unless configured), then return the task as it stands: keep its task ID and follow it with poll_task, never by submitting again. Finished outputs come as signed URLs that expire, resource links (generation://tasks/{taskId}/outputs/{index}, read afresh) and, for small images, a preview; save_outputs (or save: true) writes them to disk.
Files are read from and saved into the allowed directories; a path is absolute, ~/…, or relative to the first of them.
An error starts with its code and says what to do next. list_requests shows this key's requests when a task ID was lost.`;

/** `channelOf`: where this transport puts each call's delivery channel (see src/mcp/delivery.ts). */
export function createMcpServer(engine: Engine, channelOf?: ChannelOf): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    {
      instructions: INSTRUCTIONS,
      capabilities: {
        tools: {},
        resources: {},
        prompts: {},
        completions: {},
        // MCP Tasks (docs/tasks.md): a client that declares it gets a task for a long paid call.
        extensions: { [TASKS_EXTENSION]: {} },
      },
    },
  );
  for (const listed of CATALOG) {
    const load = TOOL_LOADERS[listed.name];
    if (!load) throw new Error(`tools/catalog.ts lists ${listed.name}, which tools/index.ts does not load`);
    registerTool(server, engine, listed, async () => (await load()).default, channelOf);
  }
  registerResources(server, engine);
  registerViewer(server, engine, {
    mediaOrigins: mediaOrigins([engine.client.baseUrl, ...(engine.config.mediaOrigins ?? [])]),
  });
  registerPrompts(server, engine);
  registerTasks(server, engine, channelOf);
  // tools/list answered from the precomputed listings (what the SDK would build from the tools
  // registered above), with the viewer's app-only tools for clients that render MCP Apps only.
  server.server.setRequestHandler("tools/list", (_request, ctx) => ({
    tools: [...CATALOG, ...viewerToolsFor(clientCapabilities(server, ctx))] as never,
  }));
  return server;
}
