import { z } from "zod";
import { BATCH_TOOLS, type BatchTool, batchCall, type ItemInput } from "../calls/paid/batch-call.js";
import type { MediaArgs } from "../calls/paid/media-call.js";
import { parseAll } from "../client/parse-or-throw.js";
import { defineTool, type ToolDefinition } from "../mcp/define-tool.js";
import { approvalField, idempotencyKeyField, waitField } from "../mcp/fields.js";
import { TASK_EXECUTION } from "../mcp/mcp-task-wire-2025.js";
import { VIEWER_LINK } from "../mcp/viewer-link.js";
import generateAudio from "./generate_audio.js";
import generateImage from "./generate_image.js";
import generateVideo from "./generate_video.js";
import { submissionHints } from "./media_args.js";

/** The most items one batch takes (docs: README's generate_batch row). */
export const MAX_BATCH_ITEMS = 10;

/** Each item is checked by its own tool's schema, as a call of that tool would be. */
const ITEM_TOOLS: Readonly<Record<BatchTool, ToolDefinition>> = {
  generate_image: generateImage as unknown as ToolDefinition,
  generate_video: generateVideo as unknown as ToolDefinition,
  generate_audio: generateAudio as unknown as ToolDefinition,
};

const input = z.strictObject({
  items: z
    .array(
      z.strictObject({
        tool: z.enum(BATCH_TOOLS).describe("Tool to call."),
        arguments: z.record(z.string(), z.unknown()).describe("Its arguments."),
      }),
    )
    .min(1)
    .max(MAX_BATCH_ITEMS)
    .describe("Calls to send."),
  maxGems: z.number().int().min(0).optional().describe("Most Gems in all."),
  approval: approvalField,
  idempotencyKey: idempotencyKeyField,
  wait: waitField,
});

// Lean (every host reads tools/list whole, within 20,000 bytes); the text says the rest.
// Lean, within the 20,000 bytes of tools/list: every answer also has the batch's idempotencyKey,
// its items ({identity, task} or {identity, error: {code, message}}) and gems (quoted, charged);
// a quote (nothing sent, the total above the threshold) has approval.
const output = z.looseObject({ next: z.string() });

/** Each item's arguments parsed by its tool's schema, or every error found, named under items[i]. */
function parseItems(items: z.infer<typeof input>["items"]): ItemInput[] {
  return items.map((item, i) => {
    const parsed = parseAll(ITEM_TOOLS[item.tool].inputSchema, item.arguments, `items[${i}].arguments`);
    return "data" in parsed
      ? { tool: item.tool, args: parsed.data as unknown as MediaArgs }
      : { tool: item.tool, errors: parsed.errors, model: item.arguments.model };
  });
}

export default defineTool({
  name: "generate_batch",
  title: "Generate a batch",
  description:
    "Runs generate_image/video/audio calls at once, one approval, one total maxGems. It spends Gems; returns its idempotencyKey and each item's task; then poll_task.",
  inputSchema: input,
  outputSchema: output,
  annotations: submissionHints,
  execution: TASK_EXECUTION,
  // The viewer shows the answer as one gallery of the items (src/viewer/app/batch-gallery.ts).
  meta: VIEWER_LINK,
  handler: (args, ctx, engine) => {
    const { approval, ...given } = args;
    return batchCall({ ...args, items: parseItems(args.items), given }, ctx, engine);
  },
});
