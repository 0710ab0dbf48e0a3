import { z } from "zod";
import { AUDIO_OPERATIONS } from "../service/limits.js";
import { submitMedia } from "../tooling/generate.js";
import { defineTool } from "../tooling/tool.js";
import { VIEWER_LINK } from "../tooling/viewer-link.js";
import { KEEP_AND_NEXT, mediaFields, submissionHints, submissionOutput } from "./media_args.js";

export default defineTool({
  name: "generate_audio",
  title: "Generate speech or music",
  description: `Generates audio: speech or voice_clone with model service-voice and a voiceProfileId from list_voices or upload_voice (prompt up to 2,000 characters), or music with the music model from list_models. ${KEEP_AND_NEXT}`,
  inputSchema: z.strictObject({
    ...mediaFields(
      "audio",
      "Speech/voice_clone: voiceProfileId (required), speed 0.5 to 2, volume -6 to 6 dB, temperature 0 to 1. Music: musicMode (simple or advanced), instrumental (on, off), coverAudio (asset ID); advanced only: style (up to 1,000), title (up to 80), negativeTags, vocalGender (auto, m, f), duration (off, 30, 60, 120, 180, 240).",
    ),
    operation: z
      .enum(AUDIO_OPERATIONS)
      .describe("speech (text to speech), voice_clone (speech in a private uploaded voice) or music."),
  }),
  outputSchema: submissionOutput,
  annotations: submissionHints,
  meta: VIEWER_LINK,
  handler: (args, ctx, engine) => submitMedia("generate_audio", "audio", args, ctx, engine),
});
