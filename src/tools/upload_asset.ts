import { z } from "zod";
import { ArgumentError } from "../service/errors.js";
import { LIMITS } from "../service/limits.js";
import { Questions } from "../tooling/ask.js";
import { allowedDirs, type MediaType, openMedia, sniff } from "../tooling/files.js";
import { okResult } from "../tooling/results.js";
import { defineTool } from "../tooling/tool.js";
import { VIEWER_LINK } from "../tooling/viewer-link.js";

const MAX = LIMITS.asset.maxBytes;
const MEDIA = /^(image|video|audio)\//;
const notMedia = (t: MediaType | undefined): string | undefined =>
  t && MEDIA.test(t.mime)
    ? undefined
    : `is ${t ? t.mime : "not a recognizable media file"}; uploads must be image, video or audio`;

export default defineTool({
  name: "upload_asset",
  title: "Upload an image, video or audio file",
  description:
    "Uploads owned media (image, video or audio, up to 30 MiB) and returns its asset ID, for referenceAssetIds, sourceImage, endFrame, coverAudio or extract_video's videoAssetId. Give `path` (a file inside the allowed directories) or, for clients without files, `data` (base64) with `mimeType`. The type is checked from the bytes. It does not spend Gems or start generation. Not idempotent: if an upload's outcome is unclear, check before uploading again.",
  inputSchema: z.strictObject({
    path: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe(
        "File to upload: absolute, ~/…, or relative to the first allowed directory. Give this or data.",
      ),
    data: z
      .string()
      .min(1)
      .max(Math.ceil(MAX / 3) * 4)
      .optional()
      .describe("The file's bytes as base64 (at most 30 MiB decoded), with mimeType. Give this or path."),
    mimeType: z
      .string()
      .regex(/^(image|video|audio)\/[\w.+-]+$/, "must be an image/*, video/* or audio/* type")
      .optional()
      .describe("MIME type of data (image/*, video/* or audio/*); checked against the bytes."),
    filename: z
      .string()
      .min(1)
      .max(LIMITS.asset.filename)
      .optional()
      .describe("Name to record with the asset (up to 255 characters)."),
  }),
  outputSchema: z.object({
    asset: z
      .looseObject({ id: z.string(), kind: z.string(), state: z.string(), url: z.string().nullable() })
      .describe("The asset: id (use this, not the URL), kind, state (ready when usable) and url."),
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
        throw new ArgumentError("data", `decodes to ${bytes.byteLength} bytes; the limit is ${MAX}`);
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
