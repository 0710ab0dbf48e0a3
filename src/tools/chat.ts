import { z } from "zod";
import { chatCall } from "../calls/paid/chat-call.js";
import { checkChatRules, withRules } from "../client/request-rules.js";
import { ChatRequestSchema } from "../client/schemas.js";
import { LIMITS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { approvalField, approvalOut, idempotencyKeyField, textMaxGemsField } from "../mcp/fields.js";

const C = ChatRequestSchema.shape;

export default defineTool({
  name: "chat",
  title: "Chat completion",
  description:
    "Sends a conversation to a text model and returns the whole answer with its identity (idempotencyKey). It spends Gems (a reservation, settled on usage).",
  // The service's ChatRequest with its conversation bound (src/client/schemas.ts,
  // src/client/request-rules.ts); always streamed, so `stream` is the tool's to set.
  inputSchema: withRules(
    ChatRequestSchema.omit({ stream: true }).extend({
      model: C.model.describe("ID from list_models (kind text)."),
      messages: C.messages.describe("The conversation: at most 128,000 bytes as JSON."),
      max_tokens: C.max_tokens.describe(`Most tokens to generate; default ${LIMITS.text.maxTokens.default}.`),
      temperature: C.temperature.describe("Sampling temperature."),
      top_p: C.top_p.describe("Nucleus sampling."),
      response_format: C.response_format.describe("Plain text or a JSON object."),
      maxGems: textMaxGemsField,
      idempotencyKey: idempotencyKeyField,
      approval: approvalField,
    }),
    checkChatRules,
  ),
  // A quote (nothing sent) carries only `approval`.
  outputSchema: z.object({
    idempotencyKey: z.string().optional(),
    created: z.boolean().optional(),
    id: z.string().optional(),
    model: z.string().optional(),
    content: z.string().optional(),
    finishReason: z.string().nullable().optional().describe("stop, length, …"),
    usage: z.looseObject({}).nullable().optional().describe("Token counts."),
    approval: approvalOut,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (args, ctx, engine) => chatCall(args, ctx, engine),
});
