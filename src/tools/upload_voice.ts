import { z } from "zod";
import { fileScope, refuseWithoutFiles, rootsFor } from "../calls/files/file-areas.js";
import { openMedia } from "../calls/files/files.js";
import { askForUpload } from "../calls/uploads/chunked-upload.js";
import { notVoice, voiceDuration } from "../calls/uploads/media-rules.js";
import { LIMITS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { nextOut } from "../mcp/fields.js";
import { AFTER } from "../mcp/next-steps.js";
import { declined, Questions } from "../mcp/questions.js";
import { okResult } from "../mcp/results.js";
import { VIEWER_LINK } from "../mcp/viewer-link.js";
import { ArgumentError } from "../shared/local-refusals.js";

const { min, max } = LIMITS.voice.duration;

export default defineTool({
  name: "upload_voice",
  title: "Upload a reference voice",
  description:
    "Uploads a recording (MP3, WAV, OGG, M4A, AAC, FLAC or WebM; up to 50 MiB; 15-300 s) as a private voice for voice_clone; without path the user picks it in the viewer. Needs the speaker's permission (asked, or rightsConfirmed). Free.",
  inputSchema: z.strictObject({
    path: z.string().min(1).max(4096).optional().describe("The audio file to upload."),
    duration: z.number().min(min).max(max).optional().describe("Seconds, if the audio's own are unreadable."),
    rightsConfirmed: z
      .boolean()
      .optional()
      .describe("True only once the user confirmed; for hosts that cannot ask."),
  }),
  outputSchema: z.object({
    voice: z.looseObject({ id: z.string(), name: z.string() }).optional(),
    // Set when the user was asked: the viewer's upload form reads its kind and limits.
    upload: z.looseObject({}).optional(),
    next: nextOut,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  meta: VIEWER_LINK,
  async handler(args, ctx, engine) {
    // The user confirms the rights with the file, in the viewer's form.
    if (args.path === undefined) return askForUpload("voice", ctx, "path");
    // A remote user's path is refused before anything is asked or read.
    refuseWithoutFiles(engine, "voice");
    const q = new Questions(ctx, { engine, tool: "upload_voice", args });
    const roots = rootsFor(engine, q);
    if (ctx.canElicit) {
      // The assistant cannot consent for the speaker: the user is asked even when rightsConfirmed is set.
      const answer = q.confirm(
        "rights",
        `Upload ${args.path} as a private reference voice for cloning? Confirm that you have the speaker's permission to clone this voice.`,
      );
      if (answer === "no") throw declined("to confirm permission to clone this voice");
    } else if (args.rightsConfirmed !== true) {
      throw new ArgumentError(
        "rightsConfirmed",
        "must be true: ask the user to confirm they have the speaker's permission to clone this voice, then call again with rightsConfirmed: true",
      );
    }
    if (q.pending || roots === "pending") return q.result();
    const scope = await fileScope(engine, roots, "voice");
    const file = await openMedia(args.path, scope, {
      field: "path",
      minBytes: LIMITS.voice.minBytes,
      maxBytes: LIMITS.voice.maxBytes,
      accept: notVoice,
    });
    try {
      const duration = await voiceDuration(file.readPath, args.duration);
      // Read through the checked descriptor (a path walked again could lead elsewhere); the
      // service names the voice after the file, so its own name goes along.
      const voice = await engine.client.uploadVoice(
        { path: file.readPath, filename: file.name, duration, rightsConfirmed: true },
        { signal: ctx.signal },
      );
      const text = [
        `Uploaded voice ${voice.id} (${voice.name}), a private draft for zero-shot cloning; nothing was trained or published.`,
      ];
      return okResult(text.join("\n"), { voice, next: AFTER.voice(voice.id) });
    } finally {
      await file.close();
    }
  },
});
