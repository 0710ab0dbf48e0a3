/**
 * Delivery as the transport sees it. A paid call's result counts as delivered only once the
 * transport has written it to a client still connected (docs/idempotency.md#delivery): the stdout write
 * completed, or the HTTP response was flushed to an open connection. Tools register what to do on
 * delivery (`ToolContext.afterDelivery`); the registering wrapper hands those callbacks to the
 * channel its call came through, and the transport runs them, or drops them when the write failed.
 *
 * A channel is found by a key object: the HTTP request a call came in (`ctx.http.req`) or, on
 * stdio, the MCP server of the connection. Transports bind channels; tools only look them up.
 */
import type { RequestId } from "@modelcontextprotocol/server";

export type DeliveryCallback = () => Promise<void>;

export interface DeliveryChannel {
  /**
   * Aborted when calls in flight should answer now with what they have: the server is shutting
   * down (their answer is still written), or the client is gone (nothing will be).
   */
  readonly hurry: AbortSignal;
  /** Takes a finished call's callbacks, to run once its response is written to a live client. */
  expect(requestId: RequestId, callbacks: readonly DeliveryCallback[]): void;
  /** A tool call on this channel answered without an error (its key is one the service accepts). */
  succeeded(): void;
}

const channels = new WeakMap<object, DeliveryChannel>();

export function bindChannel(key: object, channel: DeliveryChannel): void {
  channels.set(key, channel);
}

export function channelOf(key: object | undefined): DeliveryChannel | undefined {
  return key === undefined ? undefined : channels.get(key);
}

/** The channel transports use: callbacks wait by request ID until written, or are dropped. */
export class Channel implements DeliveryChannel {
  readonly #hurry = new AbortController();
  readonly #waiting = new Map<RequestId, DeliveryCallback[]>();
  readonly #onError: (error: unknown) => void;
  readonly #running = new Set<Promise<void>>();
  #gone = false;
  #succeeded = false;

  constructor(onError: (error: unknown) => void = () => {}) {
    this.#onError = onError;
  }

  get hurry(): AbortSignal {
    return this.#hurry.signal;
  }

  /** Calls whose response is not yet written (or dropped). */
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

  expect(requestId: RequestId, callbacks: readonly DeliveryCallback[]): void {
    if (this.#gone || callbacks.length === 0) return;
    this.#waiting.set(requestId, [...(this.#waiting.get(requestId) ?? []), ...callbacks]);
  }

  /** The response to `requestId` reached a live client: run its callbacks. */
  written(requestId: RequestId): void {
    const callbacks = this.#waiting.get(requestId);
    if (callbacks === undefined) return;
    this.#waiting.delete(requestId);
    for (const then of callbacks) {
      const running = then().catch(this.#onError);
      this.#running.add(running);
      void running.finally(() => this.#running.delete(running));
    }
  }

  /** Resolves once the callbacks started so far have finished (a shutdown waits for them). */
  async idle(): Promise<void> {
    await Promise.all([...this.#running]);
  }

  /** Every response of this channel reached a live client (an HTTP exchange that finished). */
  writtenAll(): void {
    for (const id of [...this.#waiting.keys()]) this.written(id);
  }

  /** The response to `requestId` could not be written: it was never delivered. */
  lost(requestId: RequestId): void {
    this.#waiting.delete(requestId);
  }

  /** The client is gone: nothing expected now or later is delivered, and calls stop waiting. */
  drop(): void {
    this.#gone = true;
    this.#waiting.clear();
    this.hasten(new Error("the client disconnected"));
  }

  /** Asks calls in flight to answer now with what they have (their answers are still written). */
  hasten(reason: unknown = new Error("the server is shutting down")): void {
    if (!this.#hurry.signal.aborted) this.#hurry.abort(reason);
  }
}
