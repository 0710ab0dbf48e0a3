import { catalogPrecheck } from "../calls/catalog/catalog-precheck.js";
import { submitMedia } from "../calls/paid/media-call.js";
import { defineTool } from "../mcp/define-tool.js";
import { TASK_EXECUTION } from "../mcp/mcp-task-wire-2025.js";
import { VIEWER_LINK } from "../mcp/viewer-link.js";
import { audioInput, SPENDS_AND_NEXT, submissionHints, submissionOutput } from "./media_args.js";

export default defineTool({
  name: "generate_audio",
  title: "Generate speech or music",
  description: `Generates speech (model service-voice) or music. ${SPENDS_AND_NEXT}`,
  inputSchema: audioInput({
    parameters:
      "Speech, voice_clone: voiceProfileId (required), speed 0.5-2, volume -6-6 dB, temperature 0-1. Music: musicMode (simple|advanced), instrumental (on|off), coverAudio (asset ID); advanced: style, title, negativeTags, vocalGender (auto|m|f), duration (off|30|60|120|180|240).",
    prompt: "The text to speak (up to 2,000 characters), or the music to make (simple mode: up to 5,000).",
  }),
  outputSchema: submissionOutput,
  annotations: submissionHints,
  execution: TASK_EXECUTION,
  meta: VIEWER_LINK,
  precheck: (raw, engine) => catalogPrecheck(engine, "generate_audio", "audio", raw),
  handler: (args, ctx, engine) => submitMedia("generate_audio", "audio", args, ctx, engine),
});
