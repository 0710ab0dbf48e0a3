/** Every tool, in the order tools/list shows them. */
import type { ToolDefinition } from "../src/server/tool.js";
import chat from "./chat.js";
import extractVideo from "./extract_video.js";
import generateAudio from "./generate_audio.js";
import generateImage from "./generate_image.js";
import generateVideo from "./generate_video.js";
import listModels from "./list_models.js";
import listRequests from "./list_requests.js";
import listVoices from "./list_voices.js";
import pollTask from "./poll_task.js";
import saveOutputs from "./save_outputs.js";
import uploadAsset from "./upload_asset.js";
import uploadVoice from "./upload_voice.js";

export const TOOLS: readonly ToolDefinition[] = [
  listModels,
  generateImage,
  generateVideo,
  generateAudio,
  pollTask,
  saveOutputs,
  uploadAsset,
  listVoices,
  uploadVoice,
  chat,
  extractVideo,
  listRequests,
] as ToolDefinition[];
