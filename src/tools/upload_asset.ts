import { z } from "zod";
import { fileScope, refuseWithoutFiles, rootsFor } from "../calls/files/file-areas.js";
import { openMedia, sniff } from "../calls/files/files.js";
import { askForUpload } from "../calls/uploads/chunked-upload.js";
import { decodeBase64, notMedia } from "../calls/uploads/media-rules.js";
import { LIMITS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { nextOut } from "../mcp/fields.js";
import { AFTER } from "../mcp/next-steps.js";
import { Questions } from "../mcp/questions.js";
import { okResult } from "../mcp/results.js";
import { VIEWER_LINK } from "../mcp/viewer-link.js";
import { ArgumentError } from "../shared/local-refusals.js";
import { byteSize } from "../shared/wording.js";

const MAX = LIMITS.asset.maxBytes;

/** Other names of one format, as file-type does not use them (it says image/jpeg, audio/mpeg…). */
const ALIASES: Readonly<Record<string, string>> = {
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
  "image/x-png": "image/png",
  "audio/mp3": "audio/mpeg",
  "audio/x-mp3": "audio/mpeg",
  "audio/mpeg3": "audio/mpeg",
  "audio/x-wav": "audio/wav",
  "audio/wave": "audio/wav",
  "audio/vnd.wave": "audio/wav",
  "audio/x-m4a": "audio/mp4",
  "audio/m4a": "audio/mp4",
  "audio/x-flac": "audio/flac",
  "audio/x-aac": "audio/aac",
  "video/x-m4v": "video/mp4",
  "video/x-matroska": "video/matroska",
  "video/avi": "video/vnd.avi",
  "video/x-msvideo": "video/vnd.avi",
};
/** Containers that hold sound alone or with pictures: audio/X and video/X name one format. */
const CONTAINERS = new Set(["mp4", "webm", "ogg", "matroska", "3gpp", "3gpp2", "quicktime", "x-ms-asf"]);

/**
 * Whether a stated MIME type names the format the bytes are. Only a contradiction is refused:
 * aliases (image/jpg, audio/mp3) agree, and audio/mp4 agrees with bytes sniffed as video/mp4,
 * since the container does not say whether pictures are in it.
 */
function sameFormat(stated: string, sniffed: string): boolean {
  const [a = "", x = ""] = (ALIASES[stated.toLowerCase()] ?? stated.toLowerCase()).split("/");
  const [b = "", y = ""] = (ALIASES[sniffed] ?? sniffed).split("/");
  if (x !== y) return false;
  return a === b || (CONTAINERS.has(x) && a !== "image" && b !== "image");
}

export default defineTool({
  name: "upload_asset",
  title: "Upload a media file",
  description:
    "Uploads an image, video or audio file (up to 30 MiB, typed by its bytes) from `path` or base64 `data`; with neither, the user picks it in the media viewer. Returns its asset ID. Free.",
  inputSchema: z.strictObject({
    path: z.string().min(1).max(4096).optional().describe("The file to upload."),
    data: z
      .string()
      .min(1)
      .max(
        Math.ceil(MAX / 3) * 4,
        `must decode to at most ${byteSize(MAX)} (base64 of ${byteSize(Math.ceil(MAX / 3) * 4)})`,
      )
      .optional()
      .describe("The file's bytes as base64."),
    mimeType: z
      .string()
      .regex(/^(image|video|audio)\/[\w.+-]+$/, "must be an image/*, video/* or audio/* type")
      .optional()
      .describe("The type data should be; refused if the bytes differ."),
    filename: z
      .string()
      .min(1)
      .max(LIMITS.asset.filename)
      .optional()
      .describe("Name to record with the asset."),
  }),
  outputSchema: z.object({
    asset: z
      .looseObject({ id: z.string(), kind: z.string(), state: z.string(), url: z.string().nullable() })
      .optional()
      .describe("Use id, not url; usable once state is ready."),
    // Set when the user was asked: the viewer's upload form reads its kind and limits.
    upload: z.looseObject({}).optional(),
    next: nextOut,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  meta: VIEWER_LINK,
  async handler(args, ctx, engine) {
    if (args.path === undefined && args.data === undefined) return askForUpload("asset", ctx, "path, data");
    if (args.path !== undefined && args.data !== undefined) {
      throw new ArgumentError(
        "path, data",
        "give exactly one: a file path, or the file's bytes as base64 data",
      );
    }
    const opts = { signal: ctx.signal, ...(args.filename ? { filename: args.filename } : {}) };
    let asset: Awaited<ReturnType<typeof engine.client.uploadAsset>>;
    if (args.path !== undefined) {
      // A remote user's path is refused before anything is asked or read.
      refuseWithoutFiles(engine, "asset");
      const q = new Questions(ctx);
      const roots = rootsFor(engine, q);
      if (q.pending || roots === "pending") return q.result();
      const scope = await fileScope(engine, roots, "asset");
      const file = await openMedia(args.path, scope, { field: "path", maxBytes: MAX, accept: notMedia });
      try {
        asset = await engine.client.uploadAsset(
          { path: file.readPath },
          { ...opts, filename: args.filename ?? file.name },
        );
      } finally {
        await file.close();
      }
    } else {
      const bytes = decodeBase64("data", args.data as string);
      if (bytes.byteLength > MAX)
        throw new ArgumentError(
          "data",
          `decodes to ${byteSize(bytes.byteLength)}; the limit is ${byteSize(MAX)}`,
        );
      const type = await sniff(bytes.subarray(0, 4100));
      const why = notMedia(type);
      if (why) throw new ArgumentError("data", `${why} (judged by its bytes)`);
      if (type && args.mimeType !== undefined && !sameFormat(args.mimeType, type.mime)) {
        throw new ArgumentError(
          "mimeType",
          `says ${args.mimeType} but the bytes are ${type.mime}; leave mimeType out (the type is read from the bytes) or correct it`,
        );
      }
      asset = await engine.client.uploadAsset({ data: bytes }, opts);
    }
    const text = [
      `Uploaded asset ${asset.id} (${asset.kind}, state ${asset.state}).`,
      asset.url ? `URL: ${asset.url}` : "",
    ].filter(Boolean);
    const next =
      asset.state === "ready"
        ? AFTER.assetReady(asset.id, asset.kind === "video")
        : AFTER.assetProcessing(asset.state);
    return okResult(text.join("\n"), { asset, next });
  },
});
