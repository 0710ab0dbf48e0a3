import { catalogPrecheck } from "../calls/catalog/catalog-precheck.js";
import { submitMedia } from "../calls/paid/media-call.js";
import { defineTool } from "../mcp/define-tool.js";
import { TASK_EXECUTION } from "../mcp/mcp-task-wire-2025.js";
import { VIEWER_LINK } from "../mcp/viewer-link.js";
import { SPENDS_AND_NEXT, submissionHints, submissionOutput, visualInput } from "./media_args.js";

export default defineTool({
  name: "generate_image",
  title: "Generate an image",
  description: `Generates images from a prompt, optionally from uploaded assets (references, an image to edit). ${SPENDS_AND_NEXT}`,
  inputSchema: visualInput("image", {
    parameters:
      "Per the model: ratio, resolution, outputCount (1-4), negativePrompt, magicPrompt, sourceImage (asset ID), background (auto|transparent|opaque), variant.",
  }),
  outputSchema: submissionOutput,
  annotations: submissionHints,
  execution: TASK_EXECUTION,
  meta: VIEWER_LINK,
  precheck: (raw, engine) => catalogPrecheck(engine, "generate_image", "image", raw),
  handler: (args, ctx, engine) => submitMedia("generate_image", "image", args, ctx, engine),
});
