import { z } from "zod";
import { allowedDirs, type MediaType, openMedia, sniff } from "../calls/files.js";
import { ArgumentError } from "../client/service-errors.js";
import { byteSize } from "../client/wording.js";
import { LIMITS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { Questions } from "../mcp/questions.js";
import { okResult } from "../mcp/results.js";
import { VIEWER_LINK } from "../mcp/viewer-link.js";

const MAX = LIMITS.asset.maxBytes;
const MEDIA = /^(image|video|audio)\//;
const notMedia = (t: MediaType | undefined): string | undefined =>
  t && MEDIA.test(t.mime)
    ? undefined
    : `is ${t ? t.mime : "not a recognizable media file"}; uploads must be image, video or audio`;

export default defineTool({
  name: "upload_asset",
  title: "Upload a media file",
  description:
    "Uploads an image, video or audio file (up to 30 MiB, typed by its bytes) from `path` or base64 `data`; returns its asset ID for references, sourceImage, endFrame, coverAudio or videoAssetId. Free; not idempotent.",
  inputSchema: z.strictObject({
    path: z.string().min(1).max(4096).optional().describe("The file to upload (or give data)."),
    data: z
      .string()
      .min(1)
      .max(
        Math.ceil(MAX / 3) * 4,
        `must decode to at most ${byteSize(MAX)} (base64 of ${byteSize(Math.ceil(MAX / 3) * 4)})`,
      )
      .optional()
      .describe("The bytes as base64, with mimeType (or give path)."),
    mimeType: z
      .string()
      .regex(/^(image|video|audio)\/[\w.+-]+$/, "must be an image/*, video/* or audio/* type")
      .optional()
      .describe("The MIME type of data."),
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
      .describe("id (use it, not the URL), kind, state (usable when ready), url."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  meta: VIEWER_LINK,
  async handler(args, ctx, engine) {
    if ((args.path === undefined) === (args.data === undefined)) {
      throw new ArgumentError("path, data", "give exactly one: a file path, or base64 data with mimeType");
    }
    const opts = { signal: ctx.signal, ...(args.filename ? { filename: args.filename } : {}) };
    let asset: Awaited<ReturnType<typeof engine.client.uploadAsset>>;
    if (args.path !== undefined) {
      const q = new Questions(ctx);
      const roots = q.roots();
      if (q.pending || roots === "pending") return q.result();
      const dirs = await allowedDirs(engine.config.files, roots);
      const file = await openMedia(args.path, dirs, { field: "path", maxBytes: MAX, accept: notMedia });
      try {
        asset = await engine.client.uploadAsset(
          { path: file.readPath },
          { ...opts, filename: args.filename ?? file.name },
        );
      } finally {
        await file.close();
      }
    } else {
      const data = args.data as string;
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data) || data.length % 4 !== 0) {
        throw new ArgumentError("data", "is not valid base64 (A-Z, a-z, 0-9, +, / with = padding)");
      }
      if (args.mimeType === undefined) throw new ArgumentError("mimeType", "is required with data");
      const bytes = new Uint8Array(Buffer.from(data, "base64"));
      if (bytes.byteLength > MAX)
        throw new ArgumentError(
          "data",
          `decodes to ${byteSize(bytes.byteLength)}; the limit is ${byteSize(MAX)}`,
        );
      const type = await sniff(bytes.subarray(0, 4100));
      const why = notMedia(type);
      if (why) throw new ArgumentError("data", `${why} (judged by its bytes)`);
      const family = (m: string) => m.split("/")[0];
      if (type && family(type.mime) !== family(args.mimeType)) {
        throw new ArgumentError("mimeType", `says ${args.mimeType} but the bytes are ${type.mime}`);
      }
      asset = await engine.client.uploadAsset({ data: bytes }, opts);
    }
    const text = [
      `Uploaded asset ${asset.id} (${asset.kind}, state ${asset.state}).`,
      asset.url ? `URL: ${asset.url}` : "",
      asset.state === "ready"
        ? `Next: use "${asset.id}" in referenceAssetIds or a parameter such as sourceImage${asset.kind === "video" ? ", or as videoAssetId for extract_video" : ""}.`
        : `Next: the asset is ${asset.state}; a submission that uses it before it is ready gets REFERENCES_PROCESSING (retry later with the same idempotencyKey).`,
    ].filter(Boolean);
    return okResult(text.join("\n"), { asset });
  },
});
