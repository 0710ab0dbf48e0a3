/**
 * `notifications/tasks` on 2026-07-28 listens over stdio (src/mcp/mcp-task-wire-listen.ts). The SDK's
 * stdio entry serves `subscriptions/listen` (the envelope's checks, the subscription, its
 * acknowledgement, `notifications/cancelled` of it) and strips `taskIds`; this sits on the wire
 * under it (stdio-wire.ts): it notes the tasks a listen names as the request comes in, adds the
 * agreed IDs to the SDK's acknowledgement as it goes out, then writes the tasks' states after it.
 * A listen naming tasks without declaring the extension is answered -32021 in place of the
 * acknowledgement, and the SDK is told the listen was cancelled, so it delivers nothing on it.
 * Where the SDK honours nothing else of a listen, the listen is closed gracefully (its result) once
 * every task followed has ended.
 */
import {
  isJSONRPCNotification,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type RequestId,
  SUBSCRIPTION_ID_META_KEY,
} from "@modelcontextprotocol/server";
import {
  acknowledges,
  listenError,
  type TaskFeed,
  type TaskListenAsk,
  type TaskWatch,
  taskListenAsk,
  taskNotification,
  withAgreedTasks,
} from "../mcp/mcp-task-wire-listen.js";

/** What the wire calls around the SDK's messages (stdio-wire.ts's DeliveringStdioTransport). */
export interface WireHooks {
  /** A message read, before the SDK gets it. */
  inbound(message: JSONRPCMessage): void;
  /** A message the SDK sends: what to write in its place (none: nothing), and what follows the write. */
  outbound(message: JSONRPCMessage): Promise<{ message?: JSONRPCMessage; written?: () => void }>;
  /** The connection ended. */
  close(): void;
}

export class StdioTaskListens implements WireHooks {
  readonly #asked = new Map<RequestId, TaskListenAsk>();
  readonly #watches = new Map<RequestId, TaskWatch>();

  /**
   * `write`: sends a message past these hooks; `toSdk`: hands the SDK a message as if read.
   */
  constructor(
    private readonly feed: TaskFeed,
    private readonly write: (message: JSONRPCMessage) => Promise<void>,
    private readonly toSdk: (message: JSONRPCMessage) => void,
  ) {}

  // Every message passes these hooks: the two methods they follow are told by the method's name
  // first, and a response by its shape (as StdioWire.write does), so no other message is parsed
  // again by the SDK's schemas (a large result, on every answer).
  inbound(message: JSONRPCMessage): void {
    const method = (message as { method?: unknown }).method;
    if (method === "subscriptions/listen" && isJSONRPCRequest(message)) {
      const ask = taskListenAsk(message);
      if (ask !== undefined) this.#asked.set(message.id, ask);
    } else if (method === "notifications/cancelled" && isJSONRPCNotification(message)) {
      const id = message.params?.requestId as RequestId | undefined;
      if (id !== undefined) this.#end(id);
    }
  }

  async outbound(message: JSONRPCMessage): Promise<{ message?: JSONRPCMessage; written?: () => void }> {
    if ("result" in message || "error" in message) {
      // The listen answered (refused, or closed by the SDK): nothing more is followed on it.
      if (message.id !== undefined) {
        this.#asked.delete(message.id);
        this.#end(message.id);
      }
      return { message };
    }
    const id = (message as { params?: { _meta?: Record<string, unknown> } }).params?._meta?.[
      SUBSCRIPTION_ID_META_KEY
    ] as RequestId | undefined;
    const ask = id === undefined ? undefined : this.#asked.get(id);
    if (id === undefined || ask === undefined || !acknowledges(message, id)) return { message };
    this.#asked.delete(id);
    if (!ask.ok) {
      this.toSdk({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
      return { message: listenError(id, ask.error) as JSONRPCMessage };
    }
    const honoured = (message as { params?: { notifications?: object } }).params?.notifications ?? {};
    const alone = Object.keys(honoured).length === 0;
    const watch = await this.feed(ask.taskIds, {
      onTask: (task) => void this.write(taskNotification(task, id) as JSONRPCMessage).catch(() => {}),
      onSettled: () => {
        this.#watches.delete(id);
        if (alone) this.#close(id);
      },
    }).catch(() => undefined);
    if (watch === undefined || watch.taskIds.length === 0) return { message };
    this.#watches.set(id, watch);
    const acknowledged = withAgreedTasks(message as unknown as Record<string, unknown>, watch.taskIds);
    return { message: acknowledged as unknown as JSONRPCMessage, written: () => watch.start() };
  }

  close(): void {
    for (const id of [...this.#watches.keys()]) this.#end(id);
  }

  #end(id: RequestId): void {
    this.#watches.get(id)?.close();
    this.#watches.delete(id);
  }

  /** The listen's graceful close, and the SDK told to forget it. */
  #close(id: RequestId): void {
    this.toSdk({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
    const result = { resultType: "complete", _meta: { [SUBSCRIPTION_ID_META_KEY]: id } };
    void this.write({ jsonrpc: "2.0", id, result } as JSONRPCMessage).catch(() => {});
  }
}
