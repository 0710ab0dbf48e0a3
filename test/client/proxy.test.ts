/**
 * HTTPS_PROXY / HTTP_PROXY / NO_PROXY: with a proxy variable set, requests go through
 * undici's EnvHttpProxyAgent (a CONNECT tunnel here), uploads included; hosts in NO_PROXY
 * are reached directly. Real sockets on loopback; the "service" host does not resolve, so
 * a success proves the proxy carried it.
 */
import { writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceClient } from "../../src/client/service-client.js";
import { KEY, MAGIC, tempDir } from "./client-helpers.js";

interface Hit {
  method: string;
  url: string;
  auth: string | undefined;
  type: string | undefined;
  body: Buffer;
}

const hits: Hit[] = [];
const tunnels: string[] = [];
const sockets = new Set<net.Socket>();
let origin: http.Server;
let proxy: http.Server;
const tmp = tempDir();
const saved = { ...process.env };

beforeAll(async () => {
  origin = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      hits.push({
        method: req.method ?? "",
        url: req.url ?? "",
        auth: req.headers.authorization,
        type: req.headers["content-type"],
        body: Buffer.concat(chunks),
      });
      res.setHeader("content-type", "application/json");
      if (req.url?.startsWith("/api/generate/voices")) {
        res.statusCode = 201;
        return res.end(JSON.stringify({ voice: { id: "v1", name: "v" } }));
      }
      if (req.url?.startsWith("/api/generate/assets")) {
        res.statusCode = 201;
        return res.end(JSON.stringify({ asset: { id: "a1", kind: "image", state: "ready", url: null } }));
      }
      res.end(JSON.stringify({ models: [], accountingPeriod: "UTC calendar month" }));
    });
  });
  await new Promise<void>((r) => origin.listen(0, "127.0.0.1", r));
  const originPort = (origin.address() as net.AddressInfo).port;
  // Tunnels every CONNECT to the origin, whatever host was asked for.
  proxy = http.createServer((_req, res) => {
    res.statusCode = 502;
    res.end();
  });
  proxy.on("connect", (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    tunnels.push(req.url ?? "");
    sockets.add(socket);
    const up = net.connect(originPort, "127.0.0.1", () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on("error", () => socket.destroy());
    socket.on("error", () => up.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  process.env.NO_PROXY = "127.0.0.1";
});

afterAll(async () => {
  process.env = saved;
  tmp.cleanup();
  for (const s of sockets) s.destroy();
  origin.closeAllConnections();
  await new Promise((r) => proxy.close(r));
  await new Promise((r) => origin.close(r));
});

describe("proxy from the environment", () => {
  it("carries reads through the proxy, with the key for the service only", async () => {
    const c = new ServiceClient({ baseUrl: "http://service.invalid", apiKey: KEY });
    expect(await c.listModels()).toEqual({ models: [], accountingPeriod: "UTC calendar month" });
    expect(tunnels).toContain("service.invalid:80");
    expect(hits.at(-1)).toMatchObject({ method: "GET", url: "/api/generate/models", auth: `Bearer ${KEY}` });
  });

  it("streams an asset and a multipart voice through the proxy, bytes intact", async () => {
    const c = new ServiceClient({ baseUrl: "http://service.invalid", apiKey: KEY });
    const png = join(tmp.dir, "p.png");
    const pngBytes = Buffer.concat([MAGIC.png, Buffer.alloc(70_000, 5)]);
    writeFileSync(png, pngBytes);
    await c.uploadAsset({ path: png });
    expect(hits.at(-1)?.body.equals(pngBytes)).toBe(true);
    expect(hits.at(-1)?.type).toBe("image/png");

    const wav = join(tmp.dir, "v.wav");
    const wavBytes = Buffer.concat([MAGIC.wav, Buffer.alloc(50_000, 7)]);
    writeFileSync(wav, wavBytes);
    await c.uploadVoice({ path: wav, duration: 30, rightsConfirmed: true });
    const hit = hits.at(-1);
    expect(hit?.type).toMatch(/^multipart\/form-data; boundary=/);
    const form = await new Response(hit?.body, { headers: { "content-type": hit?.type ?? "" } }).formData();
    const file = form.get("file") as File;
    expect(Buffer.from(await file.arrayBuffer()).equals(wavBytes)).toBe(true);
    expect(form.get("duration")).toBe("30");
    expect(form.get("rightsConfirmed")).toBe("true");
  });

  it("reaches NO_PROXY hosts directly", async () => {
    const before = tunnels.length;
    const port = (origin.address() as net.AddressInfo).port;
    const c = new ServiceClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY });
    await c.listModels();
    expect(tunnels.length).toBe(before);
  });

  it("an injected fetch is used as given, without the proxy", async () => {
    const before = tunnels.length;
    const seen: string[] = [];
    const c = new ServiceClient({
      baseUrl: "http://service.invalid",
      apiKey: KEY,
      fetch: (async (input: string | URL | Request) => {
        seen.push(String(input));
        return Response.json({ models: [], accountingPeriod: "UTC calendar month" });
      }) as typeof fetch,
    });
    await c.listModels();
    expect(seen).toEqual(["http://service.invalid/api/generate/models"]);
    expect(tunnels.length).toBe(before);
  });
});
