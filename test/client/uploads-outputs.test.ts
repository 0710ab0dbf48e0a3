/** Uploads send the file's bytes as docs/service.md#endpoints describes; signed output URLs are read without the key. */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HttpResponse, http } from "msw";
import { afterAll, describe, expect, it } from "vitest";
import {
  InvalidResponseError,
  OutputTooLargeError,
  OutputUnavailableError,
} from "../../src/client/service-errors.js";
import { BASE, capturer, client, KEY, MAGIC, mockService, tempDir } from "./client-helpers.js";

const { server, seen } = mockService();
const capture = capturer(server);
const tmp = tempDir();
afterAll(() => tmp.cleanup());
const bearer = `Bearer ${KEY}`;

describe("uploads send the file's bytes", () => {
  it("POST /api/generate/assets: raw bytes, type from the content, X-Filename, length", async () => {
    const file = join(tmp.dir, "photo.bin");
    const bytes = Buffer.concat([MAGIC.png, Buffer.alloc(5000, 3)]);
    writeFileSync(file, bytes);
    let body = new Uint8Array();
    const got = capture("post", "/api/generate/assets", () =>
      HttpResponse.json({ asset: { id: "a1", kind: "image", state: "ready", url: null } }, { status: 201 }),
    );
    server.use(
      http.post(`${BASE}/api/generate/assets`, async ({ request }) => {
        body = new Uint8Array(await request.clone().arrayBuffer());
        return undefined;
      }),
    );
    const asset = await client().uploadAsset({ path: file });
    expect(asset).toEqual({ id: "a1", kind: "image", state: "ready", url: null });
    expect(Buffer.from(body).equals(bytes)).toBe(true);
    expect(got[0]?.headers.get("content-type")).toBe("image/png");
    expect(got[0]?.headers.get("x-filename")).toBe("photo.bin");
    expect(got[0]?.headers.get("authorization")).toBe(bearer);
    expect(got[0]?.headers.get("idempotency-key")).toBeNull();
  });

  it("POST /api/generate/assets from bytes in memory, with a long filename cut to 255", async () => {
    const bytes = Buffer.concat([MAGIC.wav, Buffer.alloc(100)]);
    const got = capture("post", "/api/generate/assets", () =>
      HttpResponse.json({ asset: { id: "a2", kind: "audio", state: "ready", url: null } }, { status: 201 }),
    );
    await client().uploadAsset({ data: new Uint8Array(bytes) }, { filename: `${"n".repeat(300)}.wav` });
    expect(got[0]?.headers.get("content-type")).toBe("audio/wav");
    expect(got[0]?.headers.get("x-filename")).toBe("n".repeat(255));
    expect(Buffer.from(got[0]?.raw ?? []).equals(bytes)).toBe(true);
  });

  it("POST /api/generate/voices: multipart with exactly file, duration, rightsConfirmed", async () => {
    const file = join(tmp.dir, "voice.wav");
    const bytes = Buffer.concat([MAGIC.wav, Buffer.alloc(20_000, 9)]);
    writeFileSync(file, bytes);
    let form: FormData | undefined;
    let type = "";
    server.use(
      http.post(`${BASE}/api/generate/voices`, async ({ request }) => {
        type = request.headers.get("content-type") ?? "";
        form = await request.formData();
        return HttpResponse.json({ voice: { id: "v9", name: "voice" } }, { status: 201 });
      }),
    );
    const voice = await client().uploadVoice({ path: file, duration: 20, rightsConfirmed: true });
    expect(voice).toEqual({ id: "v9", name: "voice" });
    expect(type).toMatch(/^multipart\/form-data; boundary=/);
    expect([...(form?.keys() ?? [])].sort()).toEqual(["duration", "file", "rightsConfirmed"]);
    expect(form?.get("duration")).toBe("20");
    expect(form?.get("rightsConfirmed")).toBe("true");
    const sent = form?.get("file") as File;
    expect(sent.name).toBe("voice.wav");
    expect(sent.type).toBe("audio/wav");
    expect(Buffer.from(await sent.arrayBuffer()).equals(bytes)).toBe(true);
  });
});

describe("signed output URLs", () => {
  const CDN = "https://cdn.elsewhere.test";

  it("are fetched without Authorization, with their MIME type", async () => {
    let auth: string | null = "unset";
    server.use(
      http.get(`${CDN}/o/1.png`, ({ request }) => {
        auth = request.headers.get("authorization");
        return new HttpResponse(new Uint8Array([1, 2, 3]), { headers: { "content-type": "image/png" } });
      }),
    );
    const out = await client().fetchOutput(`${CDN}/o/1.png?sig=abc`);
    expect(auth).toBeNull();
    expect([...out.bytes]).toEqual([1, 2, 3]);
    expect(out.mimeType).toBe("image/png");
  });

  it("never carry the key even on the service's own origin", async () => {
    let auth: string | null = "unset";
    server.use(
      http.get(`${BASE}/files/1.png`, ({ request }) => {
        auth = request.headers.get("authorization");
        return new HttpResponse(new Uint8Array([1]), { headers: { "content-type": "image/png" } });
      }),
    );
    await client().fetchOutput(`${BASE}/files/1.png?sig=1`);
    expect(auth).toBeNull();
  });

  it("refuse past maxBytes, by Content-Length and while streaming", async () => {
    server.use(
      http.get(
        `${CDN}/big`,
        () => new HttpResponse(new Uint8Array(11), { headers: { "content-length": "11" } }),
      ),
      http.get(
        `${CDN}/chunked`,
        () =>
          new HttpResponse(
            new ReadableStream({
              start(c) {
                c.enqueue(new Uint8Array(6));
                c.enqueue(new Uint8Array(6));
                c.close();
              },
            }),
          ),
      ),
    );
    await expect(client().fetchOutput(`${CDN}/big`, { maxBytes: 10 })).rejects.toBeInstanceOf(
      OutputTooLargeError,
    );
    await expect(client().fetchOutput(`${CDN}/chunked`, { maxBytes: 10 })).rejects.toThrow(
      /more than the limit of 10 bytes/,
    );
    expect((await client().fetchOutput(`${CDN}/chunked`, { maxBytes: 12 })).bytes.byteLength).toBe(12);
  });

  it("an expired signature is OUTPUT_UNAVAILABLE (read the task again)", async () => {
    server.use(http.get(`${CDN}/old`, () => new HttpResponse("<Error>Expired</Error>", { status: 403 })));
    const err = await client()
      .fetchOutput(`${CDN}/old?sig=x`)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutputUnavailableError);
    expect((err as OutputUnavailableError).message).not.toContain("sig=x");
  });

  it("a redirect from the service is not followed with the key", async () => {
    server.use(http.get(`${BASE}/api/generate/models`, () => HttpResponse.redirect(`${CDN}/steal`, 302)));
    await expect(client().listModels()).rejects.toBeInstanceOf(InvalidResponseError);
    expect(seen.every((r) => !r.url.startsWith(CDN))).toBe(true);
  });
});
