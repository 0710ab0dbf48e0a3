import { z } from "zod";
import { chatCall } from "../calls/chat-call.js";
import { LIMITS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { idempotencyKeyField, modelField, textMaxGemsField } from "../mcp/fields.js";

const T = LIMITS.text;

export default defineTool({
  name: "chat",
  title: "Chat completion",
  description:
    "Sends a conversation to a text model and returns the whole answer, finish reason, token usage and identity (idempotencyKey). Text only; it spends Gems (a reservation, settled on usage).",
  inputSchema: z.strictObject({
    model: modelField("text"),
    messages: z
      .array(
        z.strictObject({
          role: z.enum(["system", "user", "assistant"]).describe("Who speaks."),
          content: z.string().max(T.content).describe("Message text."),
        }),
      )
      .min(T.messages.min)
      .max(T.messages.max)
      .describe("The conversation: at most 128,000 bytes as JSON."),
    max_tokens: z
      .number()
      .int()
      .min(T.maxTokens.min)
      .max(T.maxTokens.max)
      .optional()
      .describe(`Most tokens to generate; default ${T.maxTokens.default}.`),
    temperature: z
      .number()
      .min(T.temperature.min)
      .max(T.temperature.max)
      .optional()
      .describe("Sampling temperature."),
    top_p: z.number().min(T.topP.min).max(T.topP.max).optional().describe("Nucleus sampling."),
    response_format: z
      .strictObject({ type: z.enum(["text", "json_object"]).describe("The format.") })
      .optional()
      .describe("Plain text or a JSON object."),
    maxGems: textMaxGemsField,
    idempotencyKey: idempotencyKeyField,
  }),
  outputSchema: z.object({
    idempotencyKey: z.string(),
    created: z.boolean(),
    id: z.string(),
    model: z.string(),
    content: z.string(),
    finishReason: z.string().nullable().describe("stop, length, …"),
    usage: z.looseObject({}).nullable().describe("Token counts, or null."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (args, ctx, engine) => chatCall(args, ctx, engine),
});
