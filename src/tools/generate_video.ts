import { catalogPrecheck } from "../calls/catalog/catalog-precheck.js";
import { submitMedia } from "../calls/paid/media-call.js";
import { defineTool } from "../mcp/define-tool.js";
import { TASK_EXECUTION } from "../mcp/mcp-task-wire-2025.js";
import { VIEWER_LINK } from "../mcp/viewer-link.js";
import { SPENDS_AND_NEXT, submissionHints, submissionOutput, visualInput } from "./media_args.js";

export default defineTool({
  name: "generate_video",
  title: "Generate a video",
  description: `Generates a video from a prompt, or from an uploaded first frame; it takes minutes. ${SPENDS_AND_NEXT}`,
  inputSchema: visualInput("video", {
    parameters:
      "mode (required: text-to-video, or image-to-video with sourceImage); per the model: endFrame (image asset ID), duration (s), ratio, resolution, audio, referenceVideo(s), referenceAudios (asset IDs).",
  }),
  outputSchema: submissionOutput,
  annotations: submissionHints,
  execution: TASK_EXECUTION,
  meta: VIEWER_LINK,
  precheck: (raw, engine) => catalogPrecheck(engine, "generate_video", "video", raw),
  handler: (args, ctx, engine) => submitMedia("generate_video", "video", args, ctx, engine),
});
