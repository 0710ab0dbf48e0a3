import { z } from "zod";
import { submitMedia } from "../tooling/generate.js";
import { defineTool } from "../tooling/tool.js";
import { VIEWER_LINK } from "../tooling/viewer-link.js";
import { KEEP_AND_NEXT, mediaFields, submissionHints, submissionOutput } from "./media_args.js";

export default defineTool({
  name: "generate_image",
  title: "Generate an image",
  description: `Generates images from a prompt with an image model from list_models (optionally editing or referencing uploaded assets). ${KEEP_AND_NEXT} Finished images come back as signed URLs, resource links and, when small, an inline preview.`,
  inputSchema: z.strictObject(
    mediaFields(
      "image",
      "Image options from the model's capabilities: ratio, resolution, outputCount (1 to 4), negativePrompt (up to 1,000 characters), magicPrompt, sourceImage (asset ID), background (auto, transparent, opaque), variant. Unknown names are refused by the service.",
    ),
  ),
  outputSchema: submissionOutput,
  annotations: submissionHints,
  meta: VIEWER_LINK,
  handler: (args, ctx, engine) => submitMedia("generate_image", "image", args, ctx, engine),
});
