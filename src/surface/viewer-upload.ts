/**
 * The media viewer's app-only upload tool: the file the user chose, in base64 chunks (chunk 0
 * first, the rest in any order); the one that completes it sends it to the service (src/calls/uploads/chunked-upload.ts). Hidden from the model (its one
 * caller is src/viewer/app/upload.ts), so, as the viewer's other app-only tools, it describes no
 * argument: every client that declares MCP Apps pays for each listed byte.
 */
import { z } from "zod";
import { receiveChunk } from "../calls/uploads/chunked-upload.js";
import { chunkCount, UPLOAD_CHUNK_BYTES } from "../calls/uploads/upload-store.js";
import { LIMITS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { nextOut } from "../mcp/fields.js";
import { AFTER } from "../mcp/next-steps.js";
import { okResult } from "../mcp/results.js";
import { byteSize } from "../shared/wording.js";

const MAX_BYTES = Math.max(LIMITS.asset.maxBytes, LIMITS.voice.maxBytes);

export const viewerUpload = defineTool({
  name: "viewer_upload",
  title: "Viewer: upload",
  description: "Media viewer only.",
  inputSchema: z.strictObject({
    upload: z.string().max(64).optional(),
    kind: z.enum(["asset", "voice"]).optional(),
    // Its limit depends on the kind: src/calls/uploads/chunked-upload.ts says which.
    size: z.number().int().min(1).optional(),
    name: z.string().min(1).max(LIMITS.asset.filename).optional(),
    rightsConfirmed: z.boolean().optional(),
    seq: z
      .number()
      .int()
      .min(0)
      .max(chunkCount(MAX_BYTES) - 1)
      .optional(),
    data: z
      .string()
      .max(Math.ceil(UPLOAD_CHUNK_BYTES / 3) * 4)
      .optional(),
  }),
  // The upload's ID and state (receiving, sending, finished), bytes received of its size, and once
  // finished the service's asset or voice.
  outputSchema: z.object({
    upload: z.string(),
    state: z.string(),
    received: z.number().optional(),
    size: z.number().optional(),
    asset: z.looseObject({}).optional(),
    voice: z.looseObject({}).optional(),
    next: nextOut,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  meta: { ui: { visibility: ["app"] } },
  async handler(args, _ctx, engine) {
    const a = await receiveChunk(engine, args);
    if ("asset" in a) {
      const { asset } = a;
      return okResult(`Uploaded asset ${asset.id} (${asset.kind}, state ${asset.state}).`, {
        ...a,
        next: AFTER.viewer,
      });
    }
    if ("voice" in a)
      return okResult(`Uploaded voice ${a.voice.id} (${a.voice.name}), a private draft.`, {
        ...a,
        next: AFTER.viewer,
      });
    const text =
      a.state === "sending"
        ? `Upload ${a.upload}: all ${byteSize(a.size)} received; still being sent to the service: ask again with the last chunk.`
        : `Upload ${a.upload}: ${byteSize(a.received)} of ${byteSize(a.size)} received; nothing sent to the service yet.`;
    return okResult(text, { ...a, next: AFTER.viewer });
  },
});
