/**
 * The app-only tools of the media viewer (registered by viewer.ts, which lists them without
 * loading this module): a single task read for the view's refresh, an output read in
 * chunks for hosts that let the view load neither the signed URL nor a whole resource, and the
 * user's own file uploaded in chunks (viewer-upload.ts).
 */
import { z } from "zod";
import { SAVE_MAX_BYTES } from "../calls/paid/saving.js";
import { isTerminal } from "../config/service-limits.js";
import type { Engine } from "../mcp/context.js";
import { defineTool, type ToolDefinition } from "../mcp/define-tool.js";
import { nextOut } from "../mcp/fields.js";
import { AFTER } from "../mcp/next-steps.js";
import { okResult } from "../mcp/results.js";
import { LocalRefusal } from "../shared/local-refusals.js";
import { statusPredicate } from "../shared/wording.js";
import { viewerUpload } from "./viewer-upload.js";

/**
 * App-only (ext-apps `McpUiToolMeta`): hosts hide the tool from the model. No `resourceUri`: that
 * marks a tool whose results open the view, and hosts such as the MCP Inspector list every tool
 * carrying one as an app to open, which these are not.
 */
const APP_ONLY = { ui: { visibility: ["app"] } };
const READ_HINTS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
// No argument descriptions and one-line tool descriptions: the model never sees these tools, their
// one caller is src/viewer/app, and every client that declares MCP Apps pays for each listed byte
// (tools/list stays at or under 20,000 bytes, test/e2e/apps-listing.test.ts).
const taskId = z.string().min(1).max(256);

const readTask = defineTool({
  name: "viewer_read_task",
  title: "Viewer: read a task",
  description: "Media viewer only.",
  inputSchema: z.strictObject({ taskId }),
  outputSchema: z.object({
    // The task as poll_task returns it (its shape is poll_task's), and whether it is terminal. App-only
    // tools describe no output fields: their one reader is src/viewer/app, and tools/list's bytes go
    // to every Apps client.
    task: z.looseObject({}),
    terminal: z.boolean(),
    next: nextOut,
  }),
  annotations: READ_HINTS,
  meta: APP_ONLY,
  async handler(args, ctx, engine) {
    const task = await engine.client.getTask(args.taskId, { signal: ctx.signal });
    return okResult(`Task ${task.id} ${statusPredicate(task.status)}.`, {
      task,
      terminal: isTerminal(task.status),
      next: AFTER.viewer,
    });
  },
});

/** Largest chunk the view reads at once: base64 grows it by a third, still under hosts' 1 MB results. */
export const CHUNK_MAX_BYTES = 512 * 1024;

/**
 * The last output read whole, per engine: the view reads one output chunk after chunk, and a
 * signed URL is fetched once for all its chunks rather than once per chunk.
 */
const lastRead = new WeakMap<Engine, { key: string; bytes: Uint8Array; mimeType: string; at: number }>();
const KEEP_MS = 60_000;

async function outputBytes(engine: Engine, id: string, index: number, signal: AbortSignal) {
  const key = `${id}\n${index}`;
  const kept = lastRead.get(engine);
  if (kept && kept.key === key && Date.now() - kept.at < KEEP_MS) return kept;
  const task = await engine.client.getTask(id, { signal });
  const asset = task.outputs.find((o) => o.index === index)?.asset;
  if (!asset) {
    throw new LocalRefusal(
      "NOT_FOUND",
      `task ${id} has no downloadable output #${index} (status ${task.status})`,
      "refresh the task; only outputs with an asset can be read.",
    );
  }
  const { bytes, mimeType } = await engine.client.fetchOutput(asset.url, {
    signal,
    maxBytes: SAVE_MAX_BYTES,
  });
  const read = { key, bytes, mimeType: asset.mimeType || mimeType, at: Date.now() };
  lastRead.set(engine, read);
  return read;
}

const readOutput = defineTool({
  name: "viewer_read_output",
  title: "Viewer: read an output",
  description: "Media viewer only.",
  inputSchema: z.strictObject({
    taskId,
    index: z.number().int().min(0).max(1000),
    offset: z.number().int().min(0),
  }),
  outputSchema: z.object({
    // The output's MIME type, this chunk's first byte, the output's size, the chunk (base64), and
    // whether the chunk ends the output.
    mimeType: z.string(),
    offset: z.number().int(),
    total: z.number().int(),
    data: z.string(),
    done: z.boolean(),
    next: nextOut,
  }),
  annotations: READ_HINTS,
  meta: APP_ONLY,
  async handler(args, ctx, engine) {
    const { bytes, mimeType } = await outputBytes(engine, args.taskId, args.index, ctx.signal);
    const offset = Math.min(args.offset, bytes.byteLength);
    const chunk = bytes.subarray(offset, offset + CHUNK_MAX_BYTES);
    const done = offset + chunk.byteLength >= bytes.byteLength;
    return okResult(
      `Output #${args.index} of task ${args.taskId}: bytes ${offset} to ${offset + chunk.byteLength} of ${bytes.byteLength}.`,
      {
        mimeType,
        offset,
        total: bytes.byteLength,
        data: Buffer.from(chunk).toString("base64"),
        done,
        next: AFTER.viewer,
      },
    );
  },
});

export const VIEWER_TOOL: Readonly<Record<string, ToolDefinition>> = {
  [readTask.name]: readTask as unknown as ToolDefinition,
  [readOutput.name]: readOutput as unknown as ToolDefinition,
  [viewerUpload.name]: viewerUpload as unknown as ToolDefinition,
};
