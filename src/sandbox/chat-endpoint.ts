/**
 * POST /api/generate/text/v1/chat/completions. Answers are computed from the messages, so tests
 * can predict them: "Sandbox answer to: <last user message, truncated> [<hash>]". Tokens are
 * counted as words for the answer and as characters / 4 for the input.
 */
import { createHash } from "node:crypto";
import { type ChatRequest, ChatRequestSchema, parseOrThrow } from "../client/schemas.js";
import { LIMITS } from "../config/service-limits.js";
import { readJson, validated } from "./body.js";
import { requireIdempotencyKey } from "./idempotency.js";
import { admit } from "./keys.js";
import { findModel } from "./model-catalog.js";
import { json, tooLarge } from "./sandbox-errors.js";
import type { RequestCtx } from "./state.js";

const WORDS_PER_CHUNK = 3;

export function chatAnswer(messages: ChatRequest["messages"]): string {
  const lastUser = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
  const trimmed = lastUser.replace(/\s+/g, " ").trim();
  const shown = trimmed.length > 120 ? `${trimmed.slice(0, 117)}...` : trimmed;
  const hash = createHash("sha256").update(JSON.stringify(messages)).digest("hex").slice(0, 8);
  return `Sandbox answer to: ${shown} [${hash}]`;
}

const promptTokens = (messages: ChatRequest["messages"]): number =>
  Math.ceil(messages.reduce((n, m) => n + m.content.length, 0) / 4) + messages.length * 4;

export async function chatCompletion(ctx: RequestCtx): Promise<Response> {
  const { s, key } = ctx;
  const identity = requireIdempotencyKey(ctx.req);
  const raw = await readJson(ctx.req, LIMITS.text.requestBytes, "The chat request");
  const prior = s.idem.lookup(key.id, identity, ctx.route, raw);
  const stream = typeof raw === "object" && raw !== null && (raw as { stream?: unknown }).stream === true;
  if (prior?.kind === "chat") return stream ? replayStream(prior.completion) : json(200, prior.completion);

  const body = validated(() => parseOrThrow(ChatRequestSchema, raw, ""));
  const conversation = Buffer.byteLength(JSON.stringify(body.messages));
  if (conversation > LIMITS.text.conversationBytes) {
    throw tooLarge(
      `messages: ${conversation} bytes serialized; the limit is ${LIMITS.text.conversationBytes}.`,
    );
  }
  const model = findModel(body.model, "text");
  const rate = model.pricing.per1kTokens ?? 1;
  const maxTokens = body.max_tokens ?? LIMITS.text.maxTokens.default;
  const input = promptTokens(body.messages);
  const reservation = Math.ceil(((input + maxTokens) * rate) / 1000);
  const now = s.clock.now();
  admit(key, reservation, body.maxGems, now);

  let content = chatAnswer(body.messages);
  let finish = "stop";
  if (body.response_format?.type === "json_object") {
    content = JSON.stringify({ answer: content, model: model.id });
  } else {
    const words = content.split(" ");
    if (words.length > maxTokens) {
      content = words.slice(0, maxTokens).join(" ");
      finish = "length";
    }
  }
  const completionTokens = content.split(" ").length;
  const usage = {
    prompt_tokens: input,
    completion_tokens: completionTokens,
    total_tokens: input + completionTokens,
  };
  const charged = Math.min(reservation, Math.ceil((usage.total_tokens * rate) / 1000));
  key.spends.add({ quoted: reservation, charged, settleAt: now });
  const completion = {
    id: s.nextId("chatcmpl-"),
    object: "chat.completion",
    created: Math.floor(now / 1000),
    model: model.id,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finish }],
    usage,
  };
  s.idem.retain(key.id, identity, ctx.route, raw, { kind: "chat", completion });
  s.stats.dispatch(ctx.route);
  if (!stream) return json(200, completion);

  const words = content.split(" ");
  const pieces: string[] = [];
  for (let i = 0; i < words.length; i += WORDS_PER_CHUNK) {
    pieces.push((i === 0 ? "" : " ") + words.slice(i, i + WORDS_PER_CHUNK).join(" "));
  }
  return sse(completion, pieces, finish, usage, ctx.fault);
}

type Completion = { id: string; created: number; model: string };

function chunk(
  c: Completion,
  delta: Record<string, unknown>,
  finish: string | null,
  usage?: unknown,
): string {
  const body: Record<string, unknown> = {
    id: c.id,
    object: "chat.completion.chunk",
    created: c.created,
    model: c.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  if (usage !== undefined) body.usage = usage;
  return `data: ${JSON.stringify(body)}\n\n`;
}

function sse(
  c: Completion,
  pieces: string[],
  finish: string,
  usage: unknown,
  fault: RequestCtx["fault"],
): Response {
  const frames = [chunk(c, { role: "assistant", content: "" }, null)];
  const broken = fault && "kind" in fault && (fault.kind === "cut-stream" || fault.kind === "error-frame");
  const upTo = broken ? Math.max(1, Math.floor(pieces.length / 2)) : pieces.length;
  for (const p of pieces.slice(0, upTo)) frames.push(chunk(c, { content: p }, null));
  if (fault && "kind" in fault && fault.kind === "error-frame") {
    const error = {
      code: "REQUEST_UNCERTAIN",
      message: "The stream was interrupted; replay with the same identity.",
    };
    frames.push(`data: ${JSON.stringify({ error })}\n\n`);
  } else if (!broken) {
    frames.push(chunk(c, {}, finish, usage), "data: [DONE]\n\n");
  }
  return streamOf(frames);
}

/** A completed streaming replay: the whole saved answer in one chunk, then usage and [DONE]. */
function replayStream(completion: Record<string, unknown>): Response {
  const c = completion as unknown as Completion & {
    choices: { message: { content: string }; finish_reason: string }[];
    usage: unknown;
  };
  const choice = c.choices[0];
  return streamOf([
    chunk(c, { role: "assistant", content: choice?.message.content ?? "" }, null),
    chunk(c, {}, choice?.finish_reason ?? "stop", c.usage),
    "data: [DONE]\n\n",
  ]);
}

function streamOf(frames: string[]): Response {
  const enc = new TextEncoder();
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const f = frames[i++];
      if (f === undefined) controller.close();
      else controller.enqueue(enc.encode(f));
    },
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}
