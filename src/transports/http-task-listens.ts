/**
 * `notifications/tasks` on a 2026-07-28 listen stream over HTTP (src/mcp/mcp-task-wire-listen.ts): the
 * SDK serves the listen (its checks of the envelope and headers, its acknowledgement, its own
 * notification types), and this wraps its stream: the acknowledgement gains the task IDs agreed,
 * the tasks' states are written after it as they change, and where the SDK honoured nothing else
 * (it then answers the listen's closing result at once) that close is held back until every task
 * followed has ended, with keep-alive comments meanwhile. The stream stays within http-listens.ts's
 * bounds: it is claimed like any listen, and each notification written is progress for its idle
 * timer. A client that leaves (the stream cancelled) stops the following.
 */
import {
  acknowledges,
  listenError,
  type TaskFeed,
  type TaskWatch,
  taskListenAsk,
  taskNotification,
  withAgreedTasks,
} from "../mcp/mcp-task-wire-listen.js";

/** As the SDK's own listen streams: a comment this often while nothing else is written. */
export const TASK_LISTEN_KEEPALIVE_MS = 15_000;

/** The SDK's answer to a listen, with the tasks its request names followed on it. */
export async function withTaskListen(
  response: Response,
  body: unknown,
  feed: TaskFeed | undefined,
): Promise<Response> {
  const ask = taskListenAsk(body);
  const stream = response.body;
  if (ask === undefined || stream === null || !isEventStream(response)) return response;
  const id = (body as { id?: unknown }).id;
  if (!ask.ok) {
    await stream.cancel().catch(() => {});
    return Response.json(listenError(id, ask.error));
  }
  if (feed === undefined) return response;
  return new Response(followed(stream, id, ask.taskIds, feed), {
    status: response.status,
    headers: response.headers,
  });
}

const isEventStream = (response: Response): boolean =>
  response.headers.get("content-type")?.includes("text/event-stream") === true;

const encoder = new TextEncoder();
const frame = (message: unknown) => encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);

/** The SSE frame's JSON-RPC message, or undefined for a comment. */
function messageOf(text: string): Record<string, unknown> | undefined {
  const data = text.split("\n").find((line) => line.startsWith("data:"));
  if (data === undefined) return undefined;
  try {
    return JSON.parse(data.slice(5).trim()) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function followed(
  source: ReadableStream<Uint8Array>,
  id: unknown,
  taskIds: string[],
  feed: TaskFeed,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let watch: TaskWatch | undefined;
  let held: Uint8Array | undefined;
  let settled = false;
  let ended = false;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  let end = () => {};
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (bytes: Uint8Array) => {
        if (!ended) controller.enqueue(bytes);
      };
      end = () => {
        if (ended) return;
        ended = true;
        clearInterval(keepAlive);
        watch?.close();
        try {
          controller.close();
        } catch {
          // Already cancelled by the client.
        }
        void reader.cancel().catch(() => {});
      };
      const hooks = {
        onTask: (task: Parameters<typeof taskNotification>[0]) => write(frame(taskNotification(task, id))),
        onSettled: () => {
          settled = true;
          if (held === undefined) return;
          write(held);
          end();
        },
      };
      const opened = feed(taskIds, hooks).then(
        (w) => {
          watch = w;
          if (ended) w.close();
          return w;
        },
        () => undefined,
      );
      void pump(reader, async (text, bytes) => {
        const message = messageOf(text);
        if (message !== undefined && acknowledges(message, id)) {
          const w = await opened;
          write(frame(withAgreedTasks(message, w?.taskIds ?? [])));
          w?.start();
          return;
        }
        // The SDK ends a listen it honours nothing else of at once: held while tasks are followed.
        const closing = message !== undefined && message.id === id && "result" in message;
        if (closing && (await opened)?.taskIds.length && !settled) {
          held = bytes;
          keepAlive = setInterval(() => write(encoder.encode(": keepalive\n\n")), TASK_LISTEN_KEEPALIVE_MS);
          keepAlive.unref();
          return;
        }
        write(bytes);
      }).then(
        () => {
          if (held === undefined || settled) end();
        },
        () => end(),
      );
    },
    cancel() {
      end();
    },
  });
}

/** Reads the SDK's stream frame by frame (SSE frames end with a blank line), in order. */
async function pump(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  each: (text: string, bytes: Uint8Array) => Promise<void>,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    for (let at = buffer.indexOf("\n\n"); at !== -1; at = buffer.indexOf("\n\n")) {
      const text = buffer.slice(0, at + 2);
      buffer = buffer.slice(at + 2);
      await each(text, encoder.encode(text));
    }
  }
}
