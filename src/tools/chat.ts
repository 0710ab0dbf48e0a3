import { z } from "zod";
import { defaultBudget } from "../calls/budget.js";
import { chargedText } from "../calls/charged.js";
import { paidCall } from "../calls/paid-call.js";
import { endpointOf } from "../client/endpoints.js";
import { LIMITS } from "../config/service-limits.js";
import { defineTool } from "../mcp/define-tool.js";
import { idempotencyKeyField, modelField, textMaxGemsField } from "../mcp/fields.js";
import { okResult } from "../mcp/results.js";

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
