import { z } from "zod";
import { BATCH_TOOLS, type BatchTool, batchCall, type ItemInput } from "../calls/paid/batch-call.js";
import type { MediaArgs } from "../calls/paid/media-call.js";
import { parseAll } from "../client/parse-or-throw.js";
import { MediaMaxGemsSchema } from "../client/schemas.js";
import { defineTool, type ToolDefinition } from "../mcp/define-tool.js";
import { idempotencyKeyField, TaskBriefOut, waitField } from "../mcp/fields.js";
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
        tool: z.enum(BATCH_TOOLS).describe("The generation tool this item calls."),
        arguments: z
          .record(z.string(), z.unknown())
          .describe(
            "Exactly that tool's arguments (model, prompt, parameters…); no wait, save or idempotencyKey.",
          ),
      }),
    )
    .min(1)
    .max(MAX_BATCH_ITEMS)
    .describe("The generations, 1 to 10, sent together."),
  maxGems: MediaMaxGemsSchema.optional().describe(
    "Most Gems the whole batch may spend, divided among the items.",
  ),
  approval: z.string().min(1).max(1_000).optional().describe("The approval token of this batch's quote."),
  idempotencyKey: idempotencyKeyField,
  wait: waitField,
});

const output = z.object({
  idempotencyKey: z.string().describe("The batch's identity; each item's is derived from it."),
  created: z.boolean().describe("False for a replayed batch."),
  items: z.array(
    z.object({
      index: z.number().int(),
      tool: z.string(),
      identity: z.string(),
      maxGems: z.number().optional(),
      created: z.boolean().optional(),
      task: TaskBriefOut.optional(),
      error: z.object({ code: z.string(), message: z.string() }).optional(),
    }),
  ),
  gems: z.object({
    estimated: z.number().optional(),
    ceiling: z.number().optional(),
    quoted: z.number(),
    charged: z.number(),
  }),
  next: z.string(),
});

/** Each item's arguments parsed by its tool's schema, or every error found, named under items[i]. */
function parseItems(items: z.infer<typeof input>["items"]): ItemInput[] {
  return items.map((item, i) => {
    const parsed = parseAll(ITEM_TOOLS[item.tool].inputSchema, item.arguments, `items[${i}].arguments`);
    return "data" in parsed
      ? { tool: item.tool, args: parsed.data as unknown as MediaArgs }
      : { tool: item.tool, errors: parsed.errors };
  });
}

export default defineTool({
  name: "generate_batch",
  title: "Generate a batch",
  description:
    "Sends 1 to 10 generate_image, generate_video or generate_audio calls together (a storyboard, variations, a campaign) under one estimate, one approval and one total maxGems divided among them. It spends Gems; returns each item's identity and task, or its refusal, and the batch's idempotencyKey; follow up with poll_task on each unfinished task.",
  inputSchema: input,
  outputSchema: output,
  annotations: submissionHints,
  meta: VIEWER_LINK,
  handler: (args, ctx, engine) => {
    const { approval, ...given } = args;
    return batchCall({ ...args, items: parseItems(args.items), given }, ctx, engine);
  },
});
