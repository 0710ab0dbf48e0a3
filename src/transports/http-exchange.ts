/**
 * One HTTP exchange: a Node request served by a fetch-shaped handler, its Response written back by
 * us rather than by the SDK's Node adapter, because delivery is decided here. The results a call
 * sends in this exchange count as delivered only once the whole response was flushed ('finish')
 * to a connection that was still open; a connection that closes first is a cancellation
 * (docs/idempotency.md#delivery): the callbacks are dropped and the calls stop waiting.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type NodeIncomingMessageLike, toWebRequest } from "@modelcontextprotocol/node";
import { waitAtMost } from "../client/deadline.js";
import { Channel } from "../mcp/delivery.js";
import { MAX_BODY_BYTES } from "./http-guard.js";

/** Serves one exchange's request; the calls it answers settle their delivery on `channel`. */
export type FetchHandler = (request: Request, channel: Channel) => Promise<Response>;

/** The exchanges in flight, so a shutdown can hurry them and wait for their answers. */
export class Exchanges {
  readonly #open = new Set<{ channel: Channel; done: Promise<void> }>();

  get size(): number {
    return this.#open.size;
  }

  track(channel: Channel, done: Promise<void>): void {
    const entry = { channel, done };
    this.#open.add(entry);
    void done.finally(() => this.#open.delete(entry));
  }

  /** Asks every call in flight to answer now, then waits (up to `ms`) for the answers to be written. */
  async settle(ms: number): Promise<void> {
    const open = [...this.#open];
    for (const e of open) e.channel.hasten();
    await waitAtMost(Promise.all(open.map((e) => e.done)), ms);
  }
}

export interface ExchangeOptions {
  handler: FetchHandler;
  parsedBody?: unknown;
  exchanges: Exchanges;
}

/**
 * Serves one Node request through `handler`, marking delivery as described above; `finished`
 * learns whether a tool call in it answered without an error and reached the client.
 */
export function serveExchange(
  req: IncomingMessage,
  res: ServerResponse,
  o: ExchangeOptions,
  report: (error: unknown) => void,
  finished: (succeeded: boolean) => void,
): void {
  const channel = new Channel(report);
  const done = run(req, res, channel, o, report).then(
    (delivered) => finished(delivered && channel.anySucceeded),
    report,
  );
  // Only POSTs carry calls; a GET is the standing event stream, which ends with its session.
  if (req.method === "POST") o.exchanges.track(channel, done);
}

/**
 * The web Request of a body already parsed (readJson): the handler takes that body as `parsedBody`
 * and never reads the Request's own, so none is built. The SDK's toWebRequest would serialize and
 * encode it again, some 7 ms for each 700 KB chunk of a media viewer upload.
 */
function headersOnly(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(":")) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  for (const name of ["content-length", "content-encoding", "transfer-encoding"]) headers.delete(name);
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
    method: req.method ?? "POST",
    headers,
    signal,
  });
}

async function run(
  req: IncomingMessage,
  res: ServerResponse,
  channel: Channel,
  o: ExchangeOptions,
  report: (error: unknown) => void,
): Promise<boolean> {
  const abort = new AbortController();
  const finished = new Promise<boolean>((resolve) => {
    res.once("finish", () => resolve(true));
    res.once("close", () => resolve(res.writableFinished));
  });
  void finished.then((flushed) => {
    if (flushed) return;
    abort.abort();
    channel.drop();
  });
  ignoreSessionOfModern(req);
  let response: Response;
  try {
    const request =
      o.parsedBody === undefined
        ? await toWebRequest(req as NodeIncomingMessageLike, undefined, {
            signal: abort.signal,
            maxRequestBodySize: MAX_BODY_BYTES,
          })
        : headersOnly(req, abort.signal);
    response = await o.handler(request, channel);
  } catch (error) {
    report(error);
    response = Response.json(
      { jsonrpc: "2.0", error: { code: -32603, message: "Internal error" }, id: null },
      { status: 500 },
    );
  }
  await writeResponse(res, response, abort.signal);
  const delivered = await finished;
  if (delivered) channel.writtenAll();
  await channel.idle();
  channel.end();
  return delivered;
}

/** The first sessionless protocol revision (2026-07-28); revisions are dates, so they sort as text. */
const SESSIONLESS_REVISION = "2026-07-28";

/**
 * A request of a sessionless revision (its MCP-Protocol-Version header) belongs to no session: an
 * Mcp-Session-Id it still carries, left from a 2025-era connection, is dropped before routing, so
 * it is served as what it is rather than sent to that session (which refuses the revision) or
 * answered "session not found".
 */
function ignoreSessionOfModern(req: IncomingMessage): void {
  const revision = req.headers["mcp-protocol-version"];
  if (typeof revision === "string" && revision >= SESSIONLESS_REVISION) delete req.headers["mcp-session-id"];
}

/** Streams a Response into a Node response, honouring backpressure; stops when the client left. */
async function writeResponse(res: ServerResponse, response: Response, gone: AbortSignal): Promise<void> {
  if (res.destroyed) return;
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => {});
  gone.addEventListener("abort", stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || gone.aborted) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const resume = () => {
            res.off("drain", resume);
            gone.removeEventListener("abort", resume);
            resolve();
          };
          res.once("drain", resume);
          gone.addEventListener("abort", resume, { once: true });
        });
      }
    }
  } catch {
    // The stream failed or was cancelled: end what was written; delivery is decided by 'finish'.
  } finally {
    gone.removeEventListener("abort", stop);
  }
  if (!res.destroyed) res.end();
}
