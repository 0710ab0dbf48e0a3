/**
 * A raw 2026-07-28 `subscriptions/listen` over Streamable HTTP naming tasks (SEP-2663), as a client
 * following its tasks by push would open it: every message of the stream kept in order, and waits
 * for the one a test expects.
 */
import { envelope, type RpcOptions } from "./tasks-wire.js";

// biome-ignore lint/suspicious/noExplicitAny: raw wire messages are read field by field.
export type Message = Record<string, any>;

export interface Listening {
  /** The HTTP status, and the JSON-RPC error when the listen was refused in one JSON answer. */
  status: number;
  error?: { code: number; message: string; data?: unknown };
  messages: Message[];
  /** Resolves once the server ended the stream. */
  ended: Promise<void>;
  /** The first message (already come, or to come) that `test` accepts. */
  next(test: (m: Message) => boolean, timeoutMs?: number): Promise<Message>;
  close(): void;
}

export async function listenTasks(
  url: string,
  notifications: Record<string, unknown>,
  o: RpcOptions & { id?: number | string } = {},
): Promise<Listening> {
  const abort = new AbortController();
  const id = o.id ?? `listen-${Math.random().toString(36).slice(2)}`;
  const response = await fetch(url, {
    method: "POST",
    signal: abort.signal,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "subscriptions/listen",
      ...(o.key === undefined ? {} : { authorization: `Bearer ${o.key}` }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: { notifications, _meta: envelope(o) },
    }),
  });
  const messages: Message[] = [];
  const waiters = new Set<() => void>();
  const tell = () => {
    for (const w of [...waiters]) w();
  };
  let error: Listening["error"];
  let ended: Promise<void>;
  if (!response.headers.get("content-type")?.includes("text/event-stream")) {
    error = ((await response.json()) as { error?: Listening["error"] }).error;
    ended = Promise.resolve();
  } else {
    ended = read(response.body as ReadableStream<Uint8Array>, (m) => {
      messages.push(m);
      tell();
    }).catch(() => {});
  }
  let over = false;
  void ended.then(() => {
    over = true;
    tell();
  });
  return {
    status: response.status,
    ...(error === undefined ? {} : { error }),
    messages,
    ended,
    next(test, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`no such message within ${timeoutMs} ms`)), timeoutMs);
        const check = () => {
          const found = messages.find(test);
          if (found !== undefined) done(undefined, found);
          else if (over) done(new Error("the stream ended without such a message"));
        };
        const done = (e?: Error, m?: Message) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (e === undefined) resolve(m as Message);
          else reject(e);
        };
        waiters.add(check);
        check();
      });
    },
    close: () => abort.abort(),
  };
}

async function read(body: ReadableStream<Uint8Array>, each: (m: Message) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let at = buffer.indexOf("\n\n"); at !== -1; at = buffer.indexOf("\n\n")) {
      const data = buffer
        .slice(0, at)
        .split("\n")
        .find((l) => l.startsWith("data:"));
      buffer = buffer.slice(at + 2);
      if (data !== undefined) each(JSON.parse(data.slice(5)) as Message);
    }
  }
}

/** The `notifications/tasks` of one task on a listen, in order. */
export const taskNotes = (l: Listening, taskId: string): Message[] =>
  l.messages.filter((m) => m.method === "notifications/tasks" && m.params?.taskId === taskId);
