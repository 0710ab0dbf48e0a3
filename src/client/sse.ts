/**
 * Decodes the chat completion event stream. A stream is complete only when `data: [DONE]`
 * follows the chunks; an error frame, a broken frame or an early end is an
 * IncompleteStreamError carrying what arrived so far, an outcome distinct from both
 * success and a definitive refusal (the ledger replays it under the same identity).
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import { ChatChunkSchema, type Usage } from "./schemas.js";
import { IncompleteStreamError } from "./service-errors.js";

export interface ChatResult {
  id: string;
  model: string;
  content: string;
  finishReason: string | null;
  usage: Usage | null;
  streamed: boolean;
}

export interface ReadStreamOptions {
  onDelta?: ((delta: string, soFar: string) => void) | undefined;
  /** Called on every network chunk, so an idle timer can be re-armed. */
  onActivity?: (() => void) | undefined;
  /** Turns a read failure into the right error (abort, timeout, connection). */
  onReadError?: ((err: unknown, partial: string) => unknown) | undefined;
  /** Stops reading when it aborts, even if the body's source ignores the abort. */
  signal?: AbortSignal | undefined;
}

export async function readChatStream(
  body: ReadableStream<Uint8Array>,
  o: ReadStreamOptions = {},
): Promise<ChatResult> {
  const result: ChatResult = {
    id: "",
    model: "",
    content: "",
    finishReason: null,
    usage: null,
    streamed: true,
  };
  const incomplete: Incomplete = (message, code, cause) =>
    new IncompleteStreamError(
      { status: 200, code, message, ...(cause === undefined ? {} : { cause }) },
      result.content,
    );

  const activity = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      o.onActivity?.();
      controller.enqueue(chunk);
    },
  });
  const events = body
    .pipeThrough(activity)
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream({ onError: "terminate" }));
  const reader = events.getReader();
  const onAbort = () => void reader.cancel().catch(() => {});
  o.signal?.addEventListener("abort", onAbort, { once: true });
  let done = false;
  let chunks = 0;
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        throw (
          o.onReadError?.(err, result.content) ?? incomplete("the stream broke before [DONE]", undefined, err)
        );
      }
      if (o.signal?.aborted) {
        const reason: unknown = o.signal.reason;
        throw (
          o.onReadError?.(reason, result.content) ?? incomplete("the stream was stopped", undefined, reason)
        );
      }
      if (next.done) break;
      const data = next.value.data;
      if (data.trim() === "[DONE]") {
        done = true;
        break;
      }
      applyFrame(data, result, incomplete, o.onDelta);
      chunks++;
    }
  } finally {
    o.signal?.removeEventListener("abort", onAbort);
    // After [DONE] (or an error) nothing more is read; release the connection.
    void reader.cancel().catch(() => {});
  }
  if (!done) throw incomplete("the stream ended before [DONE]");
  if (chunks === 0) throw incomplete("the stream sent [DONE] without any chunk");
  return result;
}

type Incomplete = (message: string, code?: string, cause?: unknown) => IncompleteStreamError;

/** Adds one `data:` frame's chunk to the result; an error frame or a malformed one ends the stream. */
function applyFrame(
  data: string,
  result: ChatResult,
  incomplete: Incomplete,
  onDelta: ReadStreamOptions["onDelta"],
): void {
  let frame: unknown;
  try {
    frame = JSON.parse(data);
  } catch (cause) {
    throw incomplete("the stream carried a frame that is not JSON", undefined, cause);
  }
  const error = (frame as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error && typeof error === "object") {
    const code = typeof error.code === "string" ? error.code : undefined;
    const message = typeof error.message === "string" ? error.message : "the stream carried an error";
    throw incomplete(`the stream carried an error: ${message}`, code);
  }
  const chunk = ChatChunkSchema.safeParse(frame);
  if (!chunk.success) throw incomplete("the stream carried a chunk of an unexpected shape");
  const c = chunk.data;
  if (c.id) result.id = c.id;
  if (c.model) result.model = c.model;
  if (c.usage) result.usage = c.usage;
  for (const choice of c.choices) {
    if (choice.finish_reason) result.finishReason = choice.finish_reason;
    const delta = choice.delta?.content;
    if (typeof delta === "string" && delta !== "") {
      result.content += delta;
      onDelta?.(delta, result.content);
    }
  }
}
