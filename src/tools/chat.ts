import { z } from "zod";
import { endpointOf } from "../service/endpoints.js";
import { LIMITS } from "../service/limits.js";
import { defaultBudget } from "../tooling/budget.js";
import { chargedText } from "../tooling/charged.js";
import { idempotencyKeyField, modelField, textMaxGemsField } from "../tooling/fields.js";
import { paidCall } from "../tooling/paid.js";
import { okResult } from "../tooling/results.js";
import { defineTool } from "../tooling/tool.js";

const T = LIMITS.text;

export default defineTool({
  name: "chat",
  title: "Chat completion",
  description:
    "Sends a conversation to a text model from list_models (kind text) and returns the whole answer with finish reason, token usage and identity; progress is reported as text streams in. Text only: no tools, images or remote references. It spends Gems (the service reserves a conservative maximum and settles on usage). Keep the identity (idempotencyKey): if the answer is cut off, calling again with the same arguments replays the saved answer without a second charge.",
  inputSchema: z.strictObject({
    model: modelField("text"),
    messages: z
      .array(
        z.strictObject({
          role: z.enum(["system", "user", "assistant"]).describe("system, user or assistant."),
          content: z.string().max(T.content).describe(`Message text, up to ${T.content} characters.`),
        }),
      )
      .min(T.messages.min)
      .max(T.messages.max)
      .describe(`The conversation, 1 to ${T.messages.max} messages; at most 128,000 bytes serialized.`),
    max_tokens: z
      .number()
      .int()
      .min(T.maxTokens.min)
      .max(T.maxTokens.max)
      .optional()
      .describe(
        `Most tokens to generate, ${T.maxTokens.min} to ${T.maxTokens.max}; default ${T.maxTokens.default}.`,
      ),
    temperature: z
      .number()
      .min(T.temperature.min)
      .max(T.temperature.max)
      .optional()
      .describe("Sampling temperature, 0 to 2."),
    top_p: z.number().min(T.topP.min).max(T.topP.max).optional().describe("Nucleus sampling, 0 to 1."),
    response_format: z
      .strictObject({ type: z.enum(["text", "json_object"]).describe("text or json_object.") })
      .optional()
      .describe("Ask for plain text or a JSON object."),
    maxGems: textMaxGemsField,
    idempotencyKey: idempotencyKeyField,
  }),
  outputSchema: z.object({
    idempotencyKey: z.string().describe("The request's identity; passing it again replays the saved answer."),
    id: z.string().describe("The completion's ID."),
    model: z.string().describe("Model that answered."),
    content: z.string().describe("The whole answer."),
    finishReason: z.string().nullable().describe("Why generation stopped (stop, length, …)."),
    usage: z.looseObject({}).nullable().describe("Token counts, when the service reports them."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(args, ctx, engine) {
    const { idempotencyKey, maxGems, ...request } = args;
    // Always streamed, so progress can follow the text as it arrives.
    const { buildChatBody } = await import("../service/requests.js");
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
