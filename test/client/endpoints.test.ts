/** Each endpoint sends exactly the request docs/service.md#endpoints describes, and parses the answer. */

import { HttpResponse, http } from "msw";
import { afterAll, describe, expect, it } from "vitest";
import { endpointOf, type SubmissionKind } from "../../src/client/endpoints.js";
import { buildChatBody, buildExtractBody, buildMediaBody } from "../../src/client/requests.js";
import { BASE, capturer, client, KEY, mockService, task, tempDir } from "./client-helpers.js";

const { server, seen } = mockService();
const tmp = tempDir();
afterAll(() => tmp.cleanup());

const capture = capturer(server);

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

  it("the catalog's same bytes reuse the last parse (frozen); changed bytes are parsed again", async () => {
    let available = true;
    const catalog = () => ({
      models: [{ id: "img-1", name: "Image One", kind: "image", available, baseGems: 4, capabilities: {} }],
      accountingPeriod: "UTC calendar month",
    });
    const got = capture("get", "/api/generate/models", () => HttpResponse.json(catalog()));
    const c = client();
    const first = await c.listModels();
    const again = await c.listModels();
    expect(again).toBe(first);
    expect(Object.isFrozen(first.models[0])).toBe(true);
    expect(() => {
      (first.models as unknown as unknown[]).push({});
    }).toThrow(TypeError);
    available = false;
    const changed = await c.listModels();
    expect(changed).not.toBe(first);
    expect(changed.models[0]?.available).toBe(false);
    // Another client (another key) never shares this client's parse.
    expect(await client().listModels()).not.toBe(changed);
    expect(got).toHaveLength(4);
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
