/**
 * Uploads over real loopback sockets, through the client's own HTTP stack (no msw): the
 * asset path recycles its read buffers there, so the bytes that arrive must still be the
 * file's, chunk after chunk, for a file many times the buffer ring.
 */
import { createHash, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceClient } from "../../src/client/service-client.js";
import { KEY, MAGIC, tempDir } from "./client-helpers.js";

const tmp = tempDir();
let server: http.Server;
let base = "";
const got: { url: string; type: string; length: string; sha256: string; bytes: number; auth: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const hash = createHash("sha256");
    let bytes = 0;
    req.on("data", (c: Buffer) => {
      bytes += c.length;
      hash.update(c);
    });
    req.on("end", () => {
      got.push({
        url: req.url ?? "",
        type: req.headers["content-type"] ?? "",
        length: req.headers["content-length"] ?? "",
        sha256: hash.digest("hex"),
        bytes,
        auth: req.headers.authorization ?? "",
      });
      res.writeHead(201, { "content-type": "application/json" });
      res.end(
        req.url === "/api/generate/voices"
          ? JSON.stringify({ voice: { id: "v1", name: "v" } })
          : JSON.stringify({ asset: { id: "a1", kind: "image", state: "ready", url: null } }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  tmp.cleanup();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("uploads on the wire", () => {
  it("a multi-megabyte asset arrives byte for byte, with its length declared", async () => {
    const bytes = Buffer.concat([MAGIC.png, randomBytes(3 * 1024 * 1024 + 12_345)]);
    const file = join(tmp.dir, "big.png");
    writeFileSync(file, bytes);
    const c = new ServiceClient({ baseUrl: base, apiKey: KEY });
    await c.uploadAsset({ path: file });
    await c.uploadAsset({ path: file }); // twice: the recycled buffers start from a used state
    for (const g of got.slice(-2)) {
      expect(g).toMatchObject({ url: "/api/generate/assets", type: "image/png", bytes: bytes.length });
      expect(g.length).toBe(String(bytes.length));
      expect(g.sha256).toBe(sha(bytes));
      expect(g.auth).toBe(`Bearer ${KEY}`);
    }
  });

  it("a voice recording arrives whole inside the multipart body", async () => {
    const bytes = Buffer.concat([MAGIC.wav, randomBytes(2 * 1024 * 1024)]);
    const file = join(tmp.dir, "voice.wav");
    writeFileSync(file, bytes);
    await new ServiceClient({ baseUrl: base, apiKey: KEY }).uploadVoice({
      path: file,
      duration: 42,
      rightsConfirmed: true,
    });
    const g = got.at(-1);
    expect(g?.url).toBe("/api/generate/voices");
    expect(g?.type).toMatch(/^multipart\/form-data; boundary=/);
    // The body is the file plus a few hundred bytes of part headers and the two fields.
    expect(g?.bytes).toBeGreaterThan(bytes.length);
    expect(g?.bytes).toBeLessThan(bytes.length + 1024);
  });
});
