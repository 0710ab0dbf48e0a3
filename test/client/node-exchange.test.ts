/**
 * The JSON requests' own transport (src/client/node-exchange.ts) over real loopback sockets: what
 * a paid submission and list_models go over when nothing replaced the runtime's fetch. The same
 * answers must read as they do through fetch: the family's classes, a refused key told, a
 * redirect not followed, a compressed body decoded, an answer cut short uncertain, a refused
 * connection known as never sent, the caller's abort honoured mid-body, and one socket reused.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceClient } from "../../src/client/service-client.js";
import {
  AuthenticationError,
  ConnectionError,
  InvalidResponseError,
  UnreachableError,
} from "../../src/client/service-errors.js";
import { KEY } from "./client-helpers.js";

const MODELS = { models: [], accountingPeriod: "UTC calendar month" };
const TASK = {
  task: {
    id: "task_1",
    status: "queued",
    quotedGems: 2,
    chargedGems: 0,
    releasedGems: 0,
    error: null,
    outputs: [],
  },
  created: true,
};

/** The answer for each path; a handler may also hold the response open. */
const routes: Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void> = {
  "/api/generate/models": (_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(MODELS)),
};
const seen: { url: string; headers: http.IncomingHttpHeaders; body: string; socket: Socket }[] = [];
let server: http.Server;
let base = "";

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ url: req.url ?? "", headers: req.headers, body, socket: req.socket });
      (routes[req.url ?? ""] ?? ((_q, r) => r.writeHead(404).end()))(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const client = (o: { onKeyRefused?: () => void } = {}) =>
  new ServiceClient({ baseUrl: base, apiKey: KEY, ...o });

describe("JSON requests over node:http", () => {
  it("sends the key, the type and the exact bytes, and reuses one socket for the next request", async () => {
    routes["/api/generate/image"] = (_req, res) =>
      res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(TASK));
    seen.length = 0;
    const c = client();
    const bytes = JSON.stringify({ model: "m", prompt: "a cat" });
    const { httpStatus, submission } = await c.submitMedia("image", bytes, "id-1");
    await c.listModels();
    expect(httpStatus).toBe(201);
    expect(submission.task.id).toBe("task_1");
    expect(seen[0]?.body).toBe(bytes);
    expect(seen[0]?.headers).toMatchObject({
      authorization: `Bearer ${KEY}`,
      "content-type": "application/json",
      "idempotency-key": "id-1",
      "content-length": String(Buffer.byteLength(bytes)),
    });
    expect(seen[1]?.socket).toBe(seen[0]?.socket);
  });

  it("decodes a gzip body a proxy compressed although nothing asked for it", async () => {
    routes["/api/generate/models"] = (_req, res) =>
      res
        .writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
        .end(gzipSync(JSON.stringify(MODELS)));
    await expect(client().listModels()).resolves.toMatchObject({ accountingPeriod: "UTC calendar month" });
  });

  it("a refused key is an AuthenticationError, told to the client's owner", async () => {
    routes["/api/generate/models"] = (_req, res) =>
      res
        .writeHead(401, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { code: "INVALID_API_KEY", message: "revoked" } }));
    let told = 0;
    const err = await client({ onKeyRefused: () => told++ })
      .listModels()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as AuthenticationError).message).toBe("GET /api/generate/models: revoked");
    expect(told).toBe(1);
  });

  it("a redirect is not followed with the key", async () => {
    routes["/api/generate/models"] = (_req, res) =>
      res.writeHead(302, { location: "http://elsewhere.test/" }).end();
    seen.length = 0;
    const err = await client()
      .listModels()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(String((err as Error).message)).toContain("redirect (HTTP 302)");
    expect(seen).toHaveLength(1);
  });

  it("a submission whose answer is cut short is uncertain, not refused", async () => {
    routes["/api/generate/image"] = (_req, res) => {
      res.writeHead(201, { "content-type": "application/json", "content-length": "500" });
      res.write('{"task":');
      res.socket?.destroy();
    };
    const err = await client()
      .submitMedia("image", "{}", "id-2")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).not.toBeInstanceOf(UnreachableError);
  });

  it("the caller's abort ends a body that never finishes, with the caller's reason", async () => {
    const caller = new AbortController();
    routes["/api/generate/image"] = (_req, res) => {
      res.writeHead(201, { "content-type": "application/json" });
      res.write('{"task":', () => caller.abort(new Error("the call was cancelled")));
    };
    const err = await client()
      .submitMedia("image", "{}", "id-3", { signal: caller.signal })
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe("the call was cancelled");
  });

  it("a refused connection is known never to have been sent", async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const c = new ServiceClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY });
    const err = await c.submitMedia("image", "{}", "id-4").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnreachableError);
    expect((err as Error).message).toContain("ECONNREFUSED");
  });

  it("a patched fetch (msw, instrumentation) still sees every JSON request", async () => {
    const native = globalThis.fetch;
    const urls: string[] = [];
    globalThis.fetch = (input, init) => {
      urls.push(String(input));
      return native(input, init);
    };
    try {
      routes["/api/generate/models"] = (_req, res) =>
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(MODELS));
      await client().listModels();
    } finally {
      globalThis.fetch = native;
    }
    expect(urls).toEqual([`${base}/api/generate/models`]);
  });
});
