/**
 * One chat completion submission: JSON, or an event stream when the body says
 * `"stream":true` (or the service answers with one, as a replay may). The deadline bounds
 * the wait for headers and, for a stream, the silence between chunks. Never retried here.
 */

import { ArgumentError } from "../shared/local-refusals.js";
import { failureOf } from "./deadline.js";
import { PATHS } from "./endpoints.js";
import type { ServiceHttp } from "./http-request.js";
import { parseBody, readText } from "./responses.js";
import { ChatCompletionSchema } from "./schemas.js";
import { IncompleteStreamError } from "./service-errors.js";
import { type ChatResult, readChatStream } from "./sse.js";

const PATH = PATHS.chat;
const WHAT = `POST ${PATH}`;

export async function sendChat(
  http: ServiceHttp,
  bytes: string,
  identity: string,
  o: { signal?: AbortSignal | undefined; onDelta?: ((delta: string, soFar: string) => void) | undefined },
): Promise<ChatResult> {
  const stream = wantsStream(bytes);
  const { res, deadline } = await http.open({
    method: "POST",
    path: PATH,
    kind: "submission",
    headers: {
      "content-type": "application/json",
      accept: stream ? "text/event-stream" : "application/json",
      "idempotency-key": identity,
    },
    body: bytes,
    signal: o.signal,
  });
  try {
    if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
      if (!res.body) {
        throw new IncompleteStreamError(
          { status: res.status, code: undefined, message: `${WHAT}: empty stream` },
          "",
        );
      }
      deadline.touch();
      return await readChatStream(res.body, {
        onDelta: o.onDelta,
        onActivity: () => deadline.touch(),
        signal: deadline.signal,
        onReadError: (err, partial) => {
          const failure = failureOf(err, deadline, o.signal, WHAT, "submission");
          if (failure === o.signal?.reason) return failure;
          const message = `${WHAT}: the stream broke before [DONE] (${(failure as Error).message})`;
          return new IncompleteStreamError(
            { status: res.status, code: undefined, message, cause: err },
            partial,
          );
        },
      });
    }
    let text: string;
    try {
      text = await readText(res, deadline.signal);
    } catch (err) {
      throw failureOf(err, deadline, o.signal, WHAT, "submission");
    }
    const completion = parseBody(ChatCompletionSchema, text, res.status, "submission", WHAT);
    const choice = completion.choices[0];
    return {
      id: completion.id,
      model: completion.model,
      content: choice?.message.content ?? "",
      finishReason: choice?.finish_reason ?? null,
      usage: completion.usage ?? null,
      streamed: false,
    };
  } finally {
    deadline.release();
  }
}

function wantsStream(bytes: string): boolean {
  try {
    return (JSON.parse(bytes) as { stream?: unknown }).stream === true;
  } catch {
    throw new ArgumentError("bytes", "must be the JSON body built by buildChatBody");
  }
}
