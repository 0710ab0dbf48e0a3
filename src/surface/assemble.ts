/**
 * One MCP server for one API key: every tool of tools/ and every resource, over an Engine.
 * Transports (stdio, HTTP) build the Engine and call this; nothing here knows about them.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { filesRule } from "../calls/files/files-rule.js";
import { registerTasks, settleAs2025Task } from "../calls/mcp-task/mcp-task-requests.js";
import { resumable } from "../calls/paid/resumable.js";
import { packageVersion } from "../config/package-version.js";
import { DEFAULT_WAIT_CAP_SECONDS } from "../config/time-limits.js";
import { verifyAnswers } from "../mcp/answers.js";
import { clientCapabilities, type Engine } from "../mcp/context.js";
import { answerToolCalls, type ToolEntry } from "../mcp/define-tool.js";
import type { DeliveryChannel } from "../mcp/delivery.js";
import { TASKS_EXTENSION } from "../mcp/mcp-task-wire.js";
import { TASKS_CAPABILITY_2025 } from "../mcp/mcp-task-wire-2025.js";
import { TOOL_LOADERS } from "../tools/all-tools.js";
import { CATALOG } from "../tools/catalog.js";
import { answerCompletions } from "./completions.js";
import { discoverEveryRevision } from "./discover.js";
import { PROMPT_COMPLETIONS, registerPrompts } from "./prompts.js";
import { registerResources, TEMPLATE_COMPLETIONS } from "./resources.js";
import { mediaOrigins, registerViewer, VIEWER_TOOL_ENTRIES, viewerToolsFor } from "./viewer.js";

export { taskFeedFor } from "./task-feed.js";

export const SERVER_NAME = "generation-mcp";

/**
 * Rules every tool shares, said once here rather than in each description (every assistant reads
 * all descriptions on every turn); each tool's description says what is its own. What files a
 * caller may use depends on who they are (src/calls/files/file-areas.ts), so that line is theirs.
 */
const instructionsWith = (files: string): string =>
  `Generates images, video, speech, music, text and video analyses on a paid service. generate_image, generate_video, generate_audio, generate_batch, chat and extract_video spend Gems from the user's key; every other tool is free.
Start with list_models (and list_voices for speech). upload_asset and upload_voice give the IDs that generation takes as references or voices.
Every paid call has an identity (idempotencyKey), returned with its result, and may cap its cost with maxGems (a higher quote or reservation is refused with PRICE_CHANGED, and nothing is charged); GENERATION_MAX_GEMS, when set, is a hard cap per request no call or approval goes above. With GENERATION_CONFIRM_ABOVE_GEMS set, a call whose estimate or maxGems exceeds it needs the user's yes: a host that can ask asks, and the amount accepted is the cap; otherwise the call sends nothing and answers a QUOTE: tell the user the amount, and only if they agree repeat the same call with approval set to the quote's token. A call not asked about is capped at that setting. A call that was cut off, or whose outcome is unknown, is safe to repeat with the same arguments (or its identity): it replays and is not charged twice. Repeating a call whose result arrived is new work and spends again.
Generation tools wait up to \`wait\` seconds (default 45 unless configured; at most ${DEFAULT_WAIT_CAP_SECONDS} in one call, since hosts cut calls at about 60 s), then return the task as it stands: keep its task ID and follow it with poll_task, never by submitting again. Finished outputs come as signed URLs that expire, resource links (generation://tasks/{taskId}/outputs/{index}, read afresh) and, for small images, a preview.
${files}
An error starts with its code and says what to do next; every result's structuredContent carries \`next\`, the step to take ("nothing: done" when none), and a failed generation is an error. Argument errors come all at once. list_requests shows this key's requests when a task ID was lost.`;

/**
 * The instructions for each files rule (three at most), written once: every server keeps its own
 * otherwise, some 2 KB per session (docs/deploying.md counts what an idle session costs).
 */
const INSTRUCTIONS = new Map<string, string>();
function instructions(engine: Engine): string {
  const files = filesRule(engine);
  let text = INSTRUCTIONS.get(files);
  if (text === undefined) {
    text = instructionsWith(files);
    INSTRUCTIONS.set(files, text);
  }
  return text;
}

/** Every tool a server answers, the same table for all: the catalog's, then the viewer's app-only ones. */
const TOOLS: ReadonlyMap<string, ToolEntry> = new Map(
  [
    ...CATALOG.map((listed): ToolEntry => {
      const load = TOOL_LOADERS[listed.name];
      if (!load)
        throw new Error(`tools/catalog.ts lists ${listed.name}, which tools/all-tools.ts does not load`);
      return { listed, load: async () => (await load()).default };
    }),
    ...VIEWER_TOOL_ENTRIES,
  ].map((tool) => [tool.listed.name, tool]),
);

/** `channel`: where this server's transport settles each call's delivery (see src/mcp/delivery.ts). */
export function createMcpServer(engine: Engine, channel?: DeliveryChannel): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: packageVersion() },
    {
      instructions: instructions(engine),
      capabilities: {
        tools: {},
        resources: {},
        prompts: {},
        completions: {},
        // MCP Tasks (docs/tasks.md): a client that declares it gets a task for a long paid call.
        extensions: { [TASKS_EXTENSION]: {} },
        // Its 2025-11-25 form (VS Code, the MCP Inspector): the SDK leaves it out of 2026-07-28 answers.
        tasks: TASKS_CAPABILITY_2025,
      },
      // A question's answer counts only with the requestState it was asked under (src/mcp/questions.ts).
      requestState: { verify: verifyAnswers(engine) },
    },
  );
  answerToolCalls(server, engine, TOOLS, channel, settleAs2025Task);
  registerResources(server, engine);
  registerViewer(server, {
    mediaOrigins: mediaOrigins([engine.client.baseUrl, ...(engine.config.mediaOrigins ?? [])]),
    publicUrl: engine.config.publicUrl,
  });
  registerPrompts(server, engine);
  answerCompletions(server, engine, { prompts: PROMPT_COMPLETIONS, templates: TEMPLATE_COMPLETIONS });
  discoverEveryRevision(server);
  registerTasks(server, engine, resumable, channel);
  // tools/list answered from the precomputed listings (what the SDK would build from the tool
  // definitions), with the viewer's app-only tools for clients that render MCP Apps only.
  server.server.setRequestHandler("tools/list", (_request, ctx) => ({
    tools: [...CATALOG, ...viewerToolsFor(clientCapabilities(server, ctx))] as never,
  }));
  return server;
}
