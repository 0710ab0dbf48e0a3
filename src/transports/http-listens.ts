/**
 * 2026-07-28 `subscriptions/listen` streams: each request is served by a handler of its own, so
 * the SDK's cap per handler bounds nothing; here the process's total and each key's share
 * (listens, listensPerKey), the share counted on every replica together when the ledger's store is
 * given (src/shared/deployment-shares.ts). The process's slot is claimed before the first await and
 * given back when the exchange ends. A stream that delivers no notification for listenIdleS is
 * closed with an error naming that limit: a keep-alive comment is not progress, and a notification
 * counts only once the client's connection has taken the bytes before it (the stream is read only as
 * the response is written, http-exchange.ts's writeResponse, which waits for `drain`).
 */
import type { Channel } from "../mcp/delivery.js";
import type { DeploymentShares } from "../shared/deployment-shares.js";
import { type LimitLog, once, type PoolRefusal, Shares, sourceOfKey } from "../shared/fair-shares.js";

/** What a refused listen is told to wait. */
export const LISTEN_RETRY_S = 30;

export interface ListenLimits {
  total: number;
  perKey: number;
  idleMs: number;
}

export class Listens {
  readonly #here: Shares;

  constructor(
    private readonly limits: ListenLimits,
    private readonly log: LimitLog,
    private readonly deployment?: DeploymentShares,
  ) {
    this.#here = new Shares(limits.total, Math.min(limits.perKey, limits.total));
  }

  /**
   * Claims a stream for `keyHash`, given back when `channel` ends: undefined when granted, else the
   * in-band refusal (as the SDK refuses one past its cap, before the stream opens).
   */
  async claim(keyHash: string, id: unknown, channel: Channel): Promise<Response | undefined> {
    const refusal = this.#here.take(keyHash);
    if (refusal !== undefined) return this.#refused(refusal, keyHash, id, "");
    const here = once(() => this.#here.give(keyHash));
    const elsewhere = await this.deployment?.claim(keyHash).catch(() => undefined);
    if (elsewhere !== undefined) {
      here();
      return this.#refused(elsewhere, keyHash, id, " on all replicas together");
    }
    channel.onEnd(() => {
      here();
      void this.deployment?.release(keyHash);
    });
    return undefined;
  }

  #refused(refusal: PoolRefusal, keyHash: string, id: unknown, where: string): Response {
    const limit = refusal.bound === "share" ? "listensPerKey" : "listens";
    this.log.note(
      limit,
      sourceOfKey(keyHash),
      `refused a subscriptions/listen: ${limit} ${refusal.limit} reached${where}`,
    );
    const whose = refusal.bound === "share" ? " for this key" : "";
    const message = `Subscription limit reached: ${refusal.limit} listen streams${whose}${where} (${limit}); close one or retry after ${LISTEN_RETRY_S} s`;
    const error = {
      code: -32603,
      message,
      data: { limit, max: refusal.limit, retryAfterSeconds: LISTEN_RETRY_S },
    };
    return Response.json({ jsonrpc: "2.0", id: id ?? null, error });
  }

  /** The listen stream of `response`, closed after the idle time without a notification delivered. */
  idleBound(response: Response, id: unknown): Response {
    if (response.body === null || !response.headers.get("content-type")?.includes("text/event-stream"))
      return response;
    const seconds = Math.round(this.limits.idleMs / 1000);
    const end = new TextEncoder().encode(
      `event: message\ndata: ${JSON.stringify({
        jsonrpc: "2.0",
        id,
        error: {
          code: -32000,
          message: `Listen stream closed: no notification for ${seconds} s (listenIdleS); listen again to go on receiving`,
          data: { limit: "listenIdleS", idleSeconds: seconds, retryAfterSeconds: 0 },
        },
      })}\n\n`,
    );
    return new Response(idleStream(response.body, this.limits.idleMs, end), {
      status: response.status,
      headers: response.headers,
    });
  }
}

const KEEPALIVE = /^(:[^\n]*\n\n)+$/;

/** `source` passed on as it is read, ended with `last` when `idleMs` pass without a notification read. */
function idleStream(
  source: ReadableStream<Uint8Array>,
  idleMs: number,
  last: Uint8Array,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const decoder = new TextDecoder();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  let arm = () => {};
  const stop = () => {
    closed = true;
    clearTimeout(timer);
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        arm = () => {
          clearTimeout(timer);
          timer = setTimeout(() => {
            if (closed) return;
            stop();
            controller.enqueue(last);
            controller.close();
            void reader.cancel().catch(() => {});
          }, idleMs);
          timer.unref();
        };
        arm();
      },
      async pull(controller) {
        const { done, value } = await reader.read();
        if (closed) return;
        if (done) {
          stop();
          controller.close();
          return;
        }
        // Progress: a frame other than a keep-alive comment, read as the client takes the bytes.
        if (!KEEPALIVE.test(decoder.decode(value))) arm();
        controller.enqueue(value);
      },
      cancel(reason) {
        stop();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
