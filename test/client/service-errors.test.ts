/**
 * Every row of docs/service.md#errors, and the failures it does not list (no code,
 * bodies that are not JSON, 400/413/502, network failures, timeouts), reach the caller as
 * the right class with the status, code, client action and outcome the ledger acts on.
 */
import { delay, HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { buildMediaBody } from "../../src/client/requests.js";
import { ServiceClient } from "../../src/client/service-client.js";
import {
  AuthenticationError,
  BadRequestError,
  CLIENT_ACTIONS,
  ConflictError,
  ConnectionError,
  InternalServerError,
  InvalidResponseError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RequestUncertainError,
  ServiceError,
  ServiceUnavailableError,
  SpendingLimitError,
  TimeoutError,
  UnprocessableEntityError,
} from "../../src/client/service-errors.js";
import { BASE, KEY, mockService, task } from "./client-helpers.js";

const { server, seen } = mockService();
const fast = (o: { timeoutMs?: number } = {}) =>
  new ServiceClient({ baseUrl: BASE, apiKey: KEY, random: () => 0, ...o });
const { bytes } = buildMediaBody("image", { model: "m", prompt: "p" });
const submit = (c = fast()) => c.submitMedia("image", bytes, "idem-1");
const caught = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as ServiceError,
  );

function answer(status: number, body: unknown, headers: Record<string, string> = {}) {
  const handler = () =>
    typeof body === "string"
      ? new HttpResponse(body, { status, headers })
      : HttpResponse.json(body as object, { status, headers });
  server.use(
    http.post(`${BASE}/api/generate/image`, handler),
    http.get(`${BASE}/api/generate/tasks/:id`, handler),
  );
}

// [status, code, class, outcome of a submission]
const TABLE = [
  [401, "INVALID_API_KEY", AuthenticationError, "definitive"],
  [403, "INSUFFICIENT_SCOPE", PermissionDeniedError, "definitive"],
  [403, "ACCOUNT_BLOCKED", PermissionDeniedError, "definitive"],
  [403, "ACCOUNT_UNAVAILABLE", PermissionDeniedError, "definitive"],
  [402, "API_KEY_LIMIT", SpendingLimitError, "definitive"],
  [402, "LLM_QUOTA_EXHAUSTED", SpendingLimitError, "definitive"],
  [409, "PRICE_CHANGED", ConflictError, "definitive"],
  [409, "IDEMPOTENCY_CONFLICT", ConflictError, "definitive"],
  [409, "REQUEST_UNCERTAIN", RequestUncertainError, "uncertain"],
  [409, "REQUEST_FAILED", ConflictError, "definitive"],
  [409, "REFERENCES_PROCESSING", RequestUncertainError, "uncertain"],
  [409, "ANALYSIS_FAILED", ConflictError, "definitive"],
  [404, "NOT_FOUND", NotFoundError, "definitive"],
  [413, "INVALID_REQUEST", PayloadTooLargeError, "definitive"],
  [422, "INVALID_REQUEST", UnprocessableEntityError, "definitive"],
  [422, "INVALID_REFERENCE", UnprocessableEntityError, "definitive"],
  [422, "MODEL_UNAVAILABLE", UnprocessableEntityError, "definitive"],
  [503, "WORKFLOW_UNAVAILABLE", ServiceUnavailableError, "uncertain"],
  [503, "PROVIDER_UNAVAILABLE", ServiceUnavailableError, "uncertain"],
  [503, "TEMPORARILY_UNAVAILABLE", ServiceUnavailableError, "uncertain"],
] as const;

describe("the errors of docs/service.md#errors", () => {
  for (const [status, code, Class, outcome] of TABLE) {
    it(`${status} ${code} -> ${Class.name}, ${outcome}`, async () => {
      answer(status, { error: { code, message: `safe message for ${code}` } });
      const err = await caught(submit());
      expect(err).toBeInstanceOf(Class);
      expect(err).toMatchObject({ status, code, outcome, serviceCode: true, requestKind: "submission" });
      expect(err?.action).toBe(CLIENT_ACTIONS[code]);
      expect(err?.message).toContain(`safe message for ${code}`);
      expect(err?.message).not.toContain(KEY);
      expect(seen).toHaveLength(1);
    });
  }

  it("a 503 on a read is retryable and retried; on a submission it is never repeated", async () => {
    answer(503, { error: { code: "TEMPORARILY_UNAVAILABLE", message: "busy" } });
    const read = await caught(fast().getTask("t1"));
    expect(read).toMatchObject({ outcome: "retryable", requestKind: "read" });
    expect(seen).toHaveLength(4);
    seen.length = 0;
    await caught(submit());
    expect(seen).toHaveLength(1);
  });
});

describe("the service layer says what happened, in the service's words", () => {
  it("no client action names a tool, an argument or a setting of the MCP server", () => {
    for (const [code, action] of Object.entries(CLIENT_ACTIONS)) {
      expect(action, code).not.toMatch(
        /GENERATION_|list_\w+|poll_task|save_outputs|upload_\w+|idempotencyKey/,
      );
    }
  });

  it("an upload that may have arrived is not to be repeated blindly: uploads carry no identity", async () => {
    server.use(http.post(`${BASE}/api/generate/assets`, () => HttpResponse.error()));
    const png = new Uint8Array([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
    ]);
    const err = await caught(fast().uploadAsset({ data: png }));
    expect(err).toMatchObject({ code: "NETWORK_ERROR", requestKind: "upload" });
    expect(err?.action).toMatch(/not repeat it blindly/);
    expect(err?.action).not.toMatch(/identity: replay|same identity/);
  });
});

describe("failures the table does not list", () => {
  it("an error without a code keeps the status, the message and a fallback code", async () => {
    answer(409, { error: { message: "conflict without a code" } });
    const err = await caught(submit());
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ status: 409, code: "CONFLICT", serviceCode: false, outcome: "definitive" });
    expect(err?.message).toContain("conflict without a code");
  });

  it("a 502 with an HTML body is BAD_GATEWAY: uncertain for a submission", async () => {
    answer(502, "<html><body>Bad Gateway</body></html>", { "content-type": "text/html" });
    const err = await caught(submit());
    expect(err).toBeInstanceOf(InternalServerError);
    expect(err).toMatchObject({ status: 502, code: "BAD_GATEWAY", outcome: "uncertain", serviceCode: false });
    expect(err?.message).toContain("HTTP 502");
    expect(err?.message).toContain("Bad Gateway");
  });

  it("a 500 with an empty body is SERVER_ERROR", async () => {
    answer(500, "");
    expect(await caught(submit())).toMatchObject({ status: 500, code: "SERVER_ERROR", outcome: "uncertain" });
  });

  it("a 413 with a plain-text body is PAYLOAD_TOO_LARGE, definitive", async () => {
    answer(413, "Request Entity Too Large");
    const err = await caught(submit());
    expect(err).toBeInstanceOf(PayloadTooLargeError);
    expect(err).toMatchObject({ code: "PAYLOAD_TOO_LARGE", outcome: "definitive" });
  });

  it("a 400 is BAD_REQUEST, definitive, and not retried on a read", async () => {
    answer(400, { error: { message: "malformed" } });
    expect(await caught(fast().getTask("t1"))).toBeInstanceOf(BadRequestError);
    expect(seen).toHaveLength(1);
  });

  it("a 200 that is not JSON is an invalid response: uncertain for a submission", async () => {
    answer(200, "not json", { "content-type": "text/plain" });
    const err = await caught(submit());
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err).toMatchObject({ outcome: "uncertain", code: "INVALID_RESPONSE" });
  });

  it("a 200 of the wrong shape names where it differs", async () => {
    answer(202, { task: { id: 1 }, created: true });
    const err = await caught(submit());
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err?.message).toMatch(/task\.id/);
  });

  it("a network failure is a ConnectionError: uncertain for a submission, retried for a read", async () => {
    server.use(
      http.post(`${BASE}/api/generate/image`, () => HttpResponse.error()),
      http.get(`${BASE}/api/generate/tasks/:id`, () => HttpResponse.error()),
    );
    const sub = await caught(submit());
    expect(sub).toBeInstanceOf(ConnectionError);
    expect(sub).toMatchObject({ code: "NETWORK_ERROR", outcome: "uncertain", status: undefined });
    expect(seen).toHaveLength(1);
    seen.length = 0;
    const read = await caught(fast().getTask("t1"));
    expect(read).toMatchObject({ code: "NETWORK_ERROR", outcome: "retryable" });
    expect(seen).toHaveLength(4);
  });

  it("a request that hangs times out: TimeoutError, uncertain for a submission", async () => {
    server.use(
      http.post(`${BASE}/api/generate/image`, async () => {
        await delay("infinite");
        return HttpResponse.json({});
      }),
    );
    const err = await caught(submit(fast({ timeoutMs: 50 })));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ code: "TIMEOUT", outcome: "uncertain", requestKind: "submission" });
  });

  it("a body that stalls after the headers also times out", async () => {
    server.use(
      http.get(
        `${BASE}/api/generate/tasks/:id`,
        () =>
          new HttpResponse(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode("{")) })),
      ),
    );
    const c = new ServiceClient({ baseUrl: BASE, apiKey: KEY, timeoutMs: 50, readRetries: 0 });
    expect(await caught(c.getTask("t1"))).toBeInstanceOf(TimeoutError);
  });

  it("the caller's abort passes through as an abort, not a service failure", async () => {
    server.use(
      http.post(`${BASE}/api/generate/image`, async () => {
        await delay("infinite");
        return HttpResponse.json({});
      }),
    );
    const ctl = new AbortController();
    const p = fast().submitMedia("image", bytes, "idem-1", { signal: ctl.signal });
    setTimeout(() => ctl.abort(), 20);
    const err = await caught(p);
    expect(err).not.toBeInstanceOf(ServiceError);
    expect((err as unknown as Error).name).toBe("AbortError");
  });
});

describe("read retries", () => {
  it("recover from transient failures", async () => {
    let n = 0;
    server.use(
      http.get(`${BASE}/api/generate/tasks/:id`, () =>
        ++n < 3 ? new HttpResponse("busy", { status: 503 }) : HttpResponse.json({ task: task() }),
      ),
    );
    expect((await fast().getTask("t1")).id).toBe("task_1");
    expect(seen).toHaveLength(3);
  });

  it("wait out a Retry-After before asking again", async () => {
    let n = 0;
    const at: number[] = [];
    server.use(
      http.get(`${BASE}/api/generate/tasks/:id`, () => {
        at.push(Date.now());
        return ++n === 1
          ? HttpResponse.json(
              { error: { code: "TEMPORARILY_UNAVAILABLE", message: "later" } },
              {
                status: 503,
                headers: { "retry-after": "1" },
              },
            )
          : HttpResponse.json({ task: task() });
      }),
    );
    await fast().getTask("t1");
    expect(at).toHaveLength(2);
    // random() is pinned to 0, so without the header the retry would be immediate.
    expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it("a Retry-After beyond 30 s is not waited out: the error carries it instead", async () => {
    server.use(
      http.get(`${BASE}/api/generate/tasks/:id`, () =>
        HttpResponse.json(
          { error: { code: "TEMPORARILY_UNAVAILABLE", message: "later" } },
          { status: 503, headers: { "retry-after": "120" } },
        ),
      ),
    );
    const err = await caught(fast().getTask("t1"));
    expect(err).toMatchObject({
      code: "TEMPORARILY_UNAVAILABLE",
      retryAfterMs: 120_000,
      outcome: "retryable",
    });
    expect(seen).toHaveLength(1);
  });

  it("uploads are never retried inside the client", async () => {
    server.use(http.post(`${BASE}/api/generate/assets`, () => new HttpResponse("x", { status: 502 })));
    const err = await caught(
      fast().uploadAsset({
        data: new Uint8Array([
          0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
        ]),
      }),
    );
    expect(err).toMatchObject({ code: "BAD_GATEWAY", requestKind: "upload", outcome: "retryable" });
    expect(seen).toHaveLength(1);
  });
});
