import { z } from "zod";
import { submitMedia } from "../tooling/generate.js";
import { defineTool } from "../tooling/tool.js";
import { VIEWER_LINK } from "../tooling/viewer-link.js";
import { KEEP_AND_NEXT, mediaFields, submissionHints, submissionOutput } from "./media_args.js";

export default defineTool({
  name: "generate_video",
  title: "Generate a video",
  description: `Generates a video from a prompt (text-to-video) or from an uploaded first frame (image-to-video) with a video model from list_models. Videos take minutes: ${KEEP_AND_NEXT}`,
  inputSchema: z.strictObject(
    mediaFields(
      "video",
      "Video options from the model's capabilities: mode (text-to-video or image-to-video; set it), sourceImage and endFrame (image asset IDs), duration (seconds), ratio, resolution, audio, referenceVideo(s), referenceAudios (asset IDs).",
    ),
  ),
  outputSchema: submissionOutput,
  annotations: submissionHints,
  meta: VIEWER_LINK,
  handler: (args, ctx, engine) => submitMedia("generate_video", "video", args, ctx, engine),
});
