/**
 * One small exchange (a string body or none, a text answer) over node:http(s) with keep-alive
 * agents: the transport under the JSON requests of http-request.ts when nothing replaced the
 * runtime's fetch. A paid submission and list_models are such exchanges, and on loopback fetch
 * spends 0.3 to 0.4 ms more per exchange than this (WHATWG Request, Headers and body streams on
 * both sides; `npm run bench:exchange`). Uploads, streamed chat and downloads stay on fetch,
 * whose streams they use; so does every request through a proxy or an injected or patched fetch.
 */
import type { Agent, IncomingMessage, request } from "node:http";
import type { Readable } from "node:stream";

/**
 * node:http as CommonJS (as in src/sandbox/sandbox-http.ts): its ESM facade reads every export,
 * and on Node 24 that loads the bundled undici behind node:http's lazy WebSocket exports, some
 * 20 ms of a start that only lists tools (the engine loads this module before tools/list).
 * node:https (with TLS) and node:zlib load on the first exchange that needs them.
 */
const http = process.getBuiltinModule("node:http");

/** What one exchange answered: the whole body read, so the socket goes back to the agent. */
export interface Exchanged {
  status: number;
  statusText: string;
  /** A response header by its lower-case name, the first value where it repeats. */
  header(name: string): string | undefined;
  text: string;
}

export interface Exchange {
  method: "GET" | "HEAD" | "POST";
  headers: Record<string, string>;
  body?: string | undefined;
  signal: AbortSignal;
}

/**
 * A failure before an answer arrived, shaped as fetch's (`TypeError: fetch failed` with the
 * socket's error as `cause`), so the client reads one shape whichever transport failed.
 */
export class ExchangeError extends TypeError {
  constructor(cause: unknown) {
    super("fetch failed", { cause });
  }
}

/**
 * Shared by every key's client, as one origin's sockets carry any key's requests (the key is a
 * header). Idle sockets are unref'd, so they never hold the process open, and closed after 4 s
 * idle (undici's default, which fetch had), or 1 s before the server's own Keep-Alive timeout: a
 * socket a load balancer dropped in silence is not reused; an answer slower than that is not cut.
 */
const AGENT_OPTIONS = { keepAlive: true, scheduling: "lifo", timeout: 4_000 } as const;
const httpAgent = new http.Agent(AGENT_OPTIONS);
let secure: { agent: Agent; request: typeof request } | undefined;

/** node:https's agent and request, loaded on the first https exchange. */
function secureTransport(): { agent: Agent; request: typeof request } {
  if (secure === undefined) {
    const https = process.getBuiltinModule("node:https");
    secure = { agent: new https.Agent(AGENT_OPTIONS), request: https.request };
  }
  return secure;
}

/** Sends `o` to `url` and reads the whole answer, under `o.signal` (which also ends the read). */
export function exchange(url: URL, o: Exchange): Promise<Exchanged> {
  const { agent, request: send } =
    url.protocol === "https:" ? secureTransport() : { agent: httpAgent, request: http.request };
  const headers = { ...o.headers };
  if (o.body !== undefined) headers["content-length"] = String(Buffer.byteLength(o.body));
  return new Promise((resolve, reject) => {
    const req = send(url, { method: o.method, headers, agent, signal: o.signal }, (res) => {
      read(decoded(res), o.signal).then(
        (text) =>
          resolve({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? "",
            header: (name) => {
              const v = res.headers[name];
              return Array.isArray(v) ? v[0] : v;
            },
            text,
          }),
        (err: unknown) => reject(new ExchangeError(err)),
      );
    });
    req.once("error", (err) => reject(new ExchangeError(err)));
    req.end(o.body);
  });
}

/**
 * The body as sent. Nothing here asks for a compressed answer (no Accept-Encoding), but a proxy
 * or CDN in front of the service may compress anyway.
 */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "identity").toLowerCase();
  if (encoding === "identity") return res;
  const zlib = process.getBuiltinModule("node:zlib");
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "deflate"
        ? zlib.createInflate()
        : encoding === "br"
          ? zlib.createBrotliDecompress()
          : undefined;
  if (decoder === undefined) return res;
  res.once("error", (err) => decoder.destroy(err));
  return res.pipe(decoder);
}

/** The whole body as UTF-8 text; rejects when the answer is cut short or `signal` aborts. */
function read(body: Readable, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let ended = false;
    const onAbort = () => body.destroy(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    const settle = (err?: unknown) => {
      signal.removeEventListener("abort", onAbort);
      if (err === undefined) resolve(Buffer.concat(chunks).toString("utf8"));
      else reject(err);
    };
    body.on("data", (chunk: Buffer) => chunks.push(chunk));
    body.once("end", () => {
      ended = true;
      settle();
    });
    body.once("error", (err) => settle(err));
    body.once("close", () => {
      if (!ended) settle(new Error("the answer ended before its body was complete"));
    });
  });
}
