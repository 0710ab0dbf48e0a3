/**
 * node:http adapter for the fetch-style core: the incoming request becomes a web Request with a
 * streaming body (aborted when the client goes away), and the Response streams back. A
 * ConnectionReset from the core destroys the socket, which the client sees as a network error.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { ConnectionReset } from "./sandbox-errors.js";

export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * node:http as CommonJS: its ESM facade reads every export, and on Node 24 that loads the bundled
 * undici behind node:http's lazy WebSocket exports, some 20 ms of every start (the engine imports
 * this module for --sandbox, so every stdio start paid it).
 */
const { createServer } = process.getBuiltinModule("node:http");

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const url = `http://${req.headers.host ?? "127.0.0.1"}${req.url ?? "/"}`;
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(url, {
    method: req.method ?? "GET",
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
}

async function send(response: Response, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    headers[k] = v;
  });
  // Refused before the body was read (413 and the like): the socket carries unread bytes, so it
  // must not be reused for another request.
  if (!req.complete) headers.connection = "close";
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  // Each chunk is flushed before the next is read, so a body that breaks midway (a fault)
  // still delivers what came before the break.
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    await new Promise<void>((resolve, reject) => res.write(chunk, (e) => (e ? reject(e) : resolve())));
  }
  res.end();
}

export async function listenHttp(
  handle: FetchHandler,
  o: { port?: number; host?: string } = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort(new Error("client disconnected"));
    });
    void (async () => {
      try {
        await send(await handle(toRequest(req, abort.signal)), req, res);
      } catch (e) {
        if (e instanceof ConnectionReset || res.headersSent || abort.signal.aborted) {
          req.socket.destroy();
          return;
        }
        console.error("sandbox: internal error", e);
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "Sandbox internal error." } }));
      }
    })();
  });
  const host = o.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
