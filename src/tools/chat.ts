import { z } from "zod";
import { defaultBudget } from "../calls/budget.js";
import { chargedText } from "../calls/charged.js";
import { paidCall } from "../calls/paid-call.js";
import { endpointOf } from "../client/endpoints.js";
import { checkChatRules, withRules } from "../client/request-rules.js";
import { ChatRequestSchema } from "../client/schemas.js";
import { LIMITS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { idempotencyKeyField, textMaxGemsField } from "../mcp/fields.js";
import { okResult } from "../mcp/results.js";

const C = ChatRequestSchema.shape;

export default defineTool({
  name: "chat",
  title: "Chat completion",
  description:
    "Sends a conversation to a text model and returns the whole answer, finish reason, token usage and identity (idempotencyKey). Text only; it spends Gems (a reservation, settled on usage).",
  // The service's ChatRequest with its conversation bound (src/client/schemas.ts,
  // src/client/request-rules.ts); always streamed, so `stream` is the tool's to set.
  inputSchema: withRules(
    ChatRequestSchema.omit({ stream: true }).extend({
      model: C.model.describe("Model ID from list_models (kind text)."),
      messages: C.messages.describe("The conversation: at most 128,000 bytes as JSON."),
      max_tokens: C.max_tokens.describe(`Most tokens to generate; default ${LIMITS.text.maxTokens.default}.`),
      temperature: C.temperature.describe("Sampling temperature."),
      top_p: C.top_p.describe("Nucleus sampling."),
      response_format: C.response_format.describe("Plain text or a JSON object."),
      maxGems: textMaxGemsField,
      idempotencyKey: idempotencyKeyField,
    }),
    checkChatRules,
  ),
  outputSchema: z.object({
    idempotencyKey: z.string(),
    id: z.string(),
    model: z.string(),
    content: z.string(),
    finishReason: z.string().nullable().describe("stop, length, …"),
    usage: z.looseObject({}).nullable().describe("Token counts, or null."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(args, ctx, engine) {
    const { idempotencyKey, maxGems, ...request } = args;
    // Always streamed, so progress can follow the text as it arrives.
    const { buildChatBody } = await import("../client/requests.js");
    let lastReport = 0;
    const paid = await paidCall(engine, ctx, {
      tool: "chat",
      endpoint: endpointOf("chat"),
      build: (ceiling) =>
        buildChatBody({ ...request, stream: true, ...(ceiling === undefined ? {} : { maxGems: ceiling }) }),
      maxGems,
      maxGemsLimit: LIMITS.textMaxGems,
      idempotencyKey,
      budget: defaultBudget(),
      send: (identity, sent, signal) =>
        engine.client.chat(sent, identity, {
          ...(signal ? { signal } : {}),
          onDelta: (_delta, soFar) => {
            const now = Date.now();
            if (now - lastReport < 250) return;
            lastReport = now;
            void ctx.progress(`Received ${soFar.length} characters`);
          },
        }),
      ref: (r) => ({ responseId: r.id }),
    });
    if (paid.kind === "answered") return paid.result;
    const { run, ceiling } = paid;
    const r = run.result;
    const structured = {
      idempotencyKey: run.identity,
      id: r.id,
      model: r.model,
      content: r.content,
      finishReason: r.finishReason,
      usage: r.usage,
    };
    const usage = r.usage
      ? Object.entries(r.usage)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ")
      : "not reported";
    const footer = [
      "",
      `(model ${r.model}; finish reason ${r.finishReason ?? "none"}; usage: ${usage}; identity ${run.identity}${run.reused ? ", replayed without a second charge" : ""})`,
      chargedText(r, ceiling.maxGems, run.reused),
      r.finishReason === "length" ? "The answer hit max_tokens: raise max_tokens or ask to continue." : "",
    ].filter((l, i) => i === 0 || l);
    return okResult([r.content, ...footer].join("\n"), structured);
  },
});
