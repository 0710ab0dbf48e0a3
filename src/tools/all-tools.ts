/**
 * Every tool, in the order tools/list shows them, as loaders: a tool's module (its zod
 * schemas and handler) is imported on its first call, not to answer tools/list.
 */
import type { ToolDefinition } from "../mcp/define-tool.js";

type Loader = () => Promise<{ default: ToolDefinition }>;

export const TOOL_LOADERS: Readonly<Record<string, Loader>> = {
  list_models: () => import("./list_models.js") as Promise<{ default: ToolDefinition }>,
  generate_image: () => import("./generate_image.js") as Promise<{ default: ToolDefinition }>,
  generate_video: () => import("./generate_video.js") as Promise<{ default: ToolDefinition }>,
  generate_audio: () => import("./generate_audio.js") as Promise<{ default: ToolDefinition }>,
  generate_batch: () => import("./generate_batch.js") as Promise<{ default: ToolDefinition }>,
  poll_task: () => import("./poll_task.js") as Promise<{ default: ToolDefinition }>,
  save_outputs: () => import("./save_outputs.js") as Promise<{ default: ToolDefinition }>,
  upload_asset: () => import("./upload_asset.js") as Promise<{ default: ToolDefinition }>,
  list_voices: () => import("./list_voices.js") as Promise<{ default: ToolDefinition }>,
  upload_voice: () => import("./upload_voice.js") as Promise<{ default: ToolDefinition }>,
  chat: () => import("./chat.js") as Promise<{ default: ToolDefinition }>,
  extract_video: () => import("./extract_video.js") as Promise<{ default: ToolDefinition }>,
  list_requests: () => import("./list_requests.js") as Promise<{ default: ToolDefinition }>,
};

/** Every definition, loaded now (for the catalog generator and tests). */
export async function loadTools(): Promise<ToolDefinition[]> {
  return Promise.all(Object.values(TOOL_LOADERS).map(async (load) => (await load()).default));
}
