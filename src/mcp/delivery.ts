/**
 * Delivery as the transport sees it. A paid call's result counts as delivered only once the
 * transport has written it to a client still connected (docs/idempotency.md#delivery): the stdout
 * write completed, or the HTTP response was flushed to an open connection. A call says what to do
 * once that is known (`ToolContext.onDelivery`); the registering wrapper hands those hooks to the
 * channel of its server, and the transport settles each one exactly once: written (true), or lost,
 * dropped or cancelled (false).
 *
 * Each server is built with its channel, never looking one up: on stdio, the connection's; for a
 * 2026-07-28 request, served by a server of its own, that HTTP exchange's; for a 2025-era session,
 * whose one server answers every exchange of the session, a SessionChannel that passes each call
 * on to the exchange that carried it, by its JSON-RPC request ID, as the SDK's transport routes
 * the call's response itself.
 */
import type { RequestId } from "@modelcontextprotocol/server";

/** Settles one call's delivery: `true` once its answer reached a live client, else `false`. Never throws. */
export type DeliveryHook = (delivered: boolean) => Promise<void>;

export interface DeliveryChannel {
  /**
   * Aborted when the call `id` should answer now with what it has: the server is shutting down
   * (its answer is still written), or its client is gone (nothing will be).
   */
  hurry(id: RequestId): AbortSignal;
  /** Takes a finished call's hooks, to settle once its response is written or lost. */
  expect(id: RequestId, hooks: readonly DeliveryHook[]): void;
  /** The tool call `id` answered without an error (its key is one the service accepts). */
  succeeded(id: RequestId): void;
}

const NEVER = new AbortController().signal;

/** The methods whose answer may deliver a result: a tool call, and a task's result (the 2025-11-25 form). */
const DELIVERING = new Set(["tools/call", "tasks/result"]);

/** The IDs of the requests in a JSON-RPC body (one message or a batch) whose answers deliver. */
function deliveringIds(body: unknown): RequestId[] {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const ids: RequestId[] = [];
  for (const m of messages) {
    const { method, id } = (m ?? {}) as { method?: unknown; id?: unknown };
    const delivering = typeof method === "string" && DELIVERING.has(method);
    if (delivering && (typeof id === "string" || typeof id === "number")) ids.push(id);
  }
  return ids;
}

/** A 2025-era session's channel: each call's delivery is that of the exchange that carried it. */
export class SessionChannel implements DeliveryChannel {
  readonly #carriers = new Map<RequestId, Channel>();

  /** The exchange on `channel` carries `body`: its tool calls and task results are delivered with it. */
  carry(channel: Channel, body: unknown): void {
    const ids = deliveringIds(body);
    if (ids.length === 0) return;
    for (const id of ids) this.#carriers.set(id, channel);
    channel.onEnd(() => {
      for (const id of ids) if (this.#carriers.get(id) === channel) this.#carriers.delete(id);
    });
  }

  hurry(id: RequestId): AbortSignal {
    return this.#carriers.get(id)?.hurry(id) ?? NEVER;
  }

  expect(id: RequestId, hooks: readonly DeliveryHook[]): void {
    const carrier = this.#carriers.get(id);
    // A call whose exchange has ended (the client left) was never delivered.
    if (carrier === undefined) for (const hook of hooks) void hook(false);
    else carrier.expect(id, hooks);
  }

  succeeded(id: RequestId): void {
    this.#carriers.get(id)?.succeeded();
  }
}

/**
 * The channel of one connection (stdio) or one HTTP exchange: hooks wait by request ID until
 * written (true) or lost (false).
 */
export class Channel implements DeliveryChannel {
  readonly #hurry = new AbortController();
  readonly #waiting = new Map<RequestId, DeliveryHook[]>();
  readonly #onError: (error: unknown) => void;
  readonly #running = new Set<Promise<void>>();
  readonly #onEnd: Array<() => void> = [];
  #gone = false;
  #succeeded = false;

  constructor(onError: (error: unknown) => void = () => {}) {
    this.#onError = onError;
  }

  hurry(_id?: RequestId): AbortSignal {
    return this.#hurry.signal;
  }

  /** Calls whose response is not yet written (or lost). */
  get waiting(): number {
    return this.#waiting.size;
  }

  /** Whether a tool call on this channel answered without an error. */
  get anySucceeded(): boolean {
    return this.#succeeded;
  }

  succeeded(): void {
    this.#succeeded = true;
  }

  expect(requestId: RequestId, hooks: readonly DeliveryHook[]): void {
    if (hooks.length === 0) return;
    if (this.#gone) {
      this.#settle(hooks, false);
      return;
    }
    this.#waiting.set(requestId, [...(this.#waiting.get(requestId) ?? []), ...hooks]);
  }

  /** The response to `requestId` reached a live client. */
  written(requestId: RequestId): void {
    this.#take(requestId, true);
  }

  /** The response to `requestId` could not be written: it was never delivered. */
  lost(requestId: RequestId): void {
    this.#take(requestId, false);
  }

  /** Runs `listener` once the exchange has ended (see `end`). */
  onEnd(listener: () => void): void {
    this.#onEnd.push(listener);
  }

  /** The exchange is over: written or lost, its hooks settled. */
  end(): void {
    for (const listener of this.#onEnd.splice(0)) listener();
  }

  /** Resolves once the hooks started so far have finished (a shutdown waits for them). */
  async idle(): Promise<void> {
    await Promise.all([...this.#running]);
  }

  /** Every response of this channel reached a live client (an HTTP exchange that finished). */
  writtenAll(): void {
    for (const id of [...this.#waiting.keys()]) this.written(id);
  }

  /** The client is gone: nothing expected now or later is delivered, and calls stop waiting. */
  drop(): void {
    this.#gone = true;
    for (const id of [...this.#waiting.keys()]) this.lost(id);
    this.hasten(new Error("the client disconnected"));
  }

  /** Asks calls in flight to answer now with what they have (their answers are still written). */
  hasten(reason: unknown = new Error("the server is shutting down")): void {
    if (!this.#hurry.signal.aborted) this.#hurry.abort(reason);
  }

  #take(requestId: RequestId, delivered: boolean): void {
    const hooks = this.#waiting.get(requestId);
    if (hooks === undefined) return;
    this.#waiting.delete(requestId);
    this.#settle(hooks, delivered);
  }

  #settle(hooks: readonly DeliveryHook[], delivered: boolean): void {
    for (const hook of hooks) {
      const running = hook(delivered).catch(this.#onError);
      this.#running.add(running);
      void running.finally(() => this.#running.delete(running));
    }
  }
}
