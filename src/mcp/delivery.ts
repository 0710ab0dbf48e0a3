/**
 * Delivery as the transport sees it. A paid call's result counts as delivered only once the
 * transport has written it to a client still connected (docs/idempotency.md#delivery): the stdout
 * write completed, or the HTTP response was flushed to an open connection. A call says what to do
 * once that is known (`ToolContext.onDelivery`); the registering wrapper hands those hooks to the
 * channel the transport gave the call, and the transport settles each one exactly once: written
 * (true), or lost, dropped or cancelled (false).
 *
 * The channel travels with the call, never looked up: on stdio the assembly is given the
 * connection's channel; on HTTP each exchange's channel rides in the request's AuthInfo, which the
 * SDK hands to the call's context (`ctx.http.authInfo`).
 */
import type { AuthInfo, RequestId } from "@modelcontextprotocol/server";

/** Settles one call's delivery: `true` once its answer reached a live client, else `false`. Never throws. */
export type DeliveryHook = (delivered: boolean) => Promise<void>;

export interface DeliveryChannel {
  /**
   * Aborted when calls in flight should answer now with what they have: the server is shutting
   * down (their answer is still written), or the client is gone (nothing will be).
   */
  readonly hurry: AbortSignal;
  /** Takes a finished call's hooks, to settle once its response is written or lost. */
  expect(requestId: RequestId, hooks: readonly DeliveryHook[]): void;
  /** A tool call on this channel answered without an error (its key is one the service accepts). */
  succeeded(): void;
}

/** How the assembly finds the channel of one call: from what the transport passed with it. */
export type ChannelOf = (auth: AuthInfo | undefined) => DeliveryChannel | undefined;

/** The AuthInfo an HTTP exchange passes on, carrying its channel. */
export function withChannel(auth: AuthInfo, channel: DeliveryChannel): AuthInfo {
  return { ...auth, extra: { ...auth.extra, delivery: channel } };
}

/** The channel an HTTP exchange put in the call's AuthInfo (see withChannel). */
export const channelInAuth: ChannelOf = (auth) => {
  const channel = auth?.extra?.delivery;
  return channel instanceof Channel ? channel : undefined;
};

/** The channel transports use: hooks wait by request ID until written (true) or lost (false). */
export class Channel implements DeliveryChannel {
  readonly #hurry = new AbortController();
  readonly #waiting = new Map<RequestId, DeliveryHook[]>();
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
