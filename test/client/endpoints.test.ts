/** Each endpoint sends exactly the request docs/service.md#endpoints describes, and parses the answer. */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HttpResponse, http } from "msw";
import { afterAll, describe, expect, it } from "vitest";
import { endpointOf, type SubmissionKind } from "../../src/client/endpoints.js";
import { buildChatBody, buildExtractBody, buildMediaBody } from "../../src/client/requests.js";
import {
  InvalidResponseError,
  OutputTooLargeError,
  OutputUnavailableError,
} from "../../src/client/service-errors.js";
import { BASE, client, KEY, MAGIC, mockService, task, tempDir } from "./client-helpers.js";

const { server, seen } = mockService();
const tmp = tempDir();
afterAll(() => tmp.cleanup());

interface Captured {
  method: string;
  path: string;
  search: string;
  headers: Headers;
  body: string;
  raw: Uint8Array;
}

/** A handler that records the request and answers with `reply`. */
function capture(method: "get" | "post" | "head", path: string, reply: () => Response) {
  const got: Captured[] = [];
  server.use(
    http[method](`${BASE}${path}`, async ({ request }) => {
      const url = new URL(request.url);
      const raw = method === "post" ? new Uint8Array(await request.arrayBuffer()) : new Uint8Array();
      got.push({
        method: request.method,
        path: url.pathname,
        search: url.search,
        headers: request.headers,
        body: new TextDecoder().decode(raw),
        raw,
      });
      return reply();
    }),
  );
  return got;
}

const bearer = `Bearer ${KEY}`;

describe("endpointOf", () => {
  it("names each submission's path as docs/service.md#endpoints does", () => {
    expect(
      ["image", "video", "audio", "chat", "extraction"].map((k) => endpointOf(k as SubmissionKind)),
    ).toEqual([
      "/api/generate/image",
      "/api/generate/video",
      "/api/generate/audio",
      "/api/generate/text/v1/chat/completions",
      "/api/generate/extract/video",
    ]);
  });
});

describe("reads", () => {
  it("GET /api/generate/models with the bearer key and no body", async () => {
    const models = {
      models: [
        { id: "img-1", name: "Image One", kind: "image", available: true, baseGems: 4, capabilities: {} },
      ],
      accountingPeriod: "UTC calendar month",
    };
    const got = capture("get", "/api/generate/models", () => HttpResponse.json(models));
    expect(await client().listModels()).toEqual(models);
    expect(got).toHaveLength(1);
    expect(got[0]?.method).toBe("GET");
    expect(got[0]?.headers.get("authorization")).toBe(bearer);
    expect(got[0]?.headers.get("idempotency-key")).toBeNull();
    expect(got[0]?.headers.get("accept")).toBe("application/json");
  });

  it("GET /api/generate/tasks/{id} escapes the ID and keeps unknown task fields", async () => {
    const got = capture("get", "/api/generate/tasks/:id", () =>
      HttpResponse.json({ task: task({ id: "t 1?#", extra: "kept" }) }),
    );
    // An ID with `/` is refused before sending (see bounds.test.ts); other characters are escaped.
    const t = await client().getTask("t 1?#");
    expect(got[0]?.path).toBe("/api/generate/tasks/t%201%3F%23");
    expect(got[0]?.headers.get("authorization")).toBe(bearer);
    expect(t).toMatchObject({ id: "t 1?#", status: "queued", extra: "kept" });
  });

  it("HEAD /api/generate/tasks/{id}: 200 is true, 404 is false (and not retried)", async () => {
    const got = capture("head", "/api/generate/tasks/:id", () => new HttpResponse(null, { status: 200 }));
    expect(await client().headTask("task_1")).toBe(true);
    expect(got[0]?.method).toBe("HEAD");
    expect(got[0]?.headers.get("authorization")).toBe(bearer);
    server.use(http.head(`${BASE}/api/generate/tasks/:id`, () => new HttpResponse(null, { status: 404 })));
    seen.length = 0;
    expect(await client().headTask("gone")).toBe(false);
    expect(seen).toHaveLength(1);
  });

  it("GET /api/generate/voices with scope, page and language in the query", async () => {
    const got = capture("get", "/api/generate/voices", () =>
      HttpResponse.json({ voices: [{ id: "v1", name: "Ada", language: "en" }], page: 2, hasMore: false }),
    );
    const list = await client().listVoices({ scope: "explore", page: 2, language: "en" });
    expect(got[0]?.search).toBe("?scope=explore&page=2&language=en");
    expect(list).toEqual({ voices: [{ id: "v1", name: "Ada", language: "en" }], page: 2, hasMore: false });
    await client().listVoices({});
    expect(got[1]?.search).toBe("");
  });
});

describe("submissions carry the identity and the exact bytes", () => {
  for (const kind of ["image", "video", "audio"] as const) {
    it(`POST /api/generate/${kind}`, async () => {
      const input =
        kind === "audio"
          ? {
              model: "service-voice",
              prompt: "Hello",
              operation: "speech",
              parameters: { voiceProfileId: "v1" },
            }
          : { model: `${kind}-model`, prompt: "a red fox", parameters: {} };
      const { bytes } = buildMediaBody(kind, input);
      const got = capture("post", `/api/generate/${kind}`, () =>
        HttpResponse.json({ task: task(), created: true }, { status: 202 }),
      );
      const r = await client().submitMedia(kind, bytes, "idem-1");
      expect(r).toEqual({ httpStatus: 202, submission: { task: task(), created: true } });
      expect(got[0]?.method).toBe("POST");
      expect(got[0]?.headers.get("authorization")).toBe(bearer);
      expect(got[0]?.headers.get("idempotency-key")).toBe("idem-1");
      expect(got[0]?.headers.get("content-type")).toBe("application/json");
      expect(got[0]?.body).toBe(bytes);
    });
  }

  it("a replay answers 200 with created:false", async () => {
    capture("post", "/api/generate/image", () => HttpResponse.json({ task: task(), created: false }));
    const { bytes } = buildMediaBody("image", { model: "m", prompt: "p" });
    const r = await client().submitMedia("image", bytes, "idem-1");
    expect(r.httpStatus).toBe(200);
    expect(r.submission.created).toBe(false);
  });

  it("POST /api/generate/extract/video", async () => {
    const { bytes } = buildExtractBody({
      model: "service-video-extract",
      videoAssetId: "a1",
      prompt: "what?",
    });
    const answer = { id: "x1", extraction: { analysis: "a fox", durationSeconds: 3, frames: [{ t: 1 }] } };
    const got = capture("post", "/api/generate/extract/video", () => HttpResponse.json(answer));
    expect(await client().extractVideo(bytes, "ex-1")).toEqual(answer);
    expect(got[0]?.headers.get("idempotency-key")).toBe("ex-1");
    expect(got[0]?.headers.get("authorization")).toBe(bearer);
    expect(got[0]?.body).toBe(bytes);
  });

  it("POST /api/generate/text/v1/chat/completions as JSON", async () => {
    const { bytes } = buildChatBody({ model: "text-1", messages: [{ role: "user", content: "hi" }] });
    const got = capture("post", "/api/generate/text/v1/chat/completions", () =>
      HttpResponse.json({
        id: "c1",
        object: "chat.completion",
        created: 1,
        model: "text-1",
        choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
    const r = await client().chat(bytes, "chat-1");
    expect(r).toEqual({
      id: "c1",
      model: "text-1",
      content: "hello",
      finishReason: "stop",
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      streamed: false,
    });
    expect(got[0]?.body).toBe(bytes);
    expect(got[0]?.headers.get("idempotency-key")).toBe("chat-1");
    expect(got[0]?.headers.get("accept")).toBe("application/json");
    expect(got[0]?.headers.get("content-type")).toBe("application/json");
  });

  it("POST chat with stream:true asks for an event stream and decodes it", async () => {
    const { bytes } = buildChatBody({
      model: "text-1",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    const sse = [
      `data: ${JSON.stringify({ id: "c2", model: "text-1", choices: [{ delta: { content: "Hel" } }] })}`,
      `data: ${JSON.stringify({ id: "c2", model: "text-1", choices: [{ delta: { content: "lo" }, finish_reason: "stop" }], usage: { total_tokens: 3 } })}`,
      "data: [DONE]",
      "",
    ].join("\n\n");
    const got = capture(
      "post",
      "/api/generate/text/v1/chat/completions",
      () => new HttpResponse(sse, { headers: { "content-type": "text/event-stream" } }),
    );
    const deltas: string[] = [];
    const r = await client().chat(bytes, "chat-2", { onDelta: (d) => deltas.push(d) });
    expect(got[0]?.headers.get("accept")).toBe("text/event-stream");
    expect(r).toEqual({
      id: "c2",
      model: "text-1",
      content: "Hello",
      finishReason: "stop",
      usage: { total_tokens: 3 },
      streamed: true,
    });
    expect(deltas).toEqual(["Hel", "lo"]);
  });
});

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
