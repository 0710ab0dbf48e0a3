/**
 * Admission by rate (src/transports/http-admission.ts): each key's and each address's budget of
 * requests and body bytes a minute, refused 429 with Retry-After and the setting's name before the
 * body is read, one owner's refusals leaving another's requests untouched.
 */
import type { IncomingMessage } from "node:http";
import { request } from "node:http";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { type DEFAULT_SERVE_LIMITS, readServeLimits, serveLimits } from "../../src/config/serve-limits.js";
import { LimitLog } from "../../src/shared/fair-shares.js";
import { Admission, ratesSet } from "../../src/transports/http-admission.js";
import { readJson } from "../../src/transports/http-body.js";
import { INIT, KEY_A, KEY_B, startProbe } from "./http-probe.js";

const MiB = 1024 * 1024;
const reqOf = (bytes: number, address = "203.0.113.7") =>
  ({
    headers: bytes > 0 ? { "content-length": String(bytes) } : {},
    socket: { remoteAddress: address },
  }) as unknown as IncomingMessage;

function admission(set: Partial<typeof DEFAULT_SERVE_LIMITS>, lines: string[] = []) {
  return new Admission(serveLimits(set), new LimitLog((l) => lines.push(l)));
}

describe("the budgets", () => {
  it("refuses a key's request past its count, naming the limit, and leaves other keys alone", async () => {
    const lines: string[] = [];
    const a = admission({ requestsPerKeyMinute: 3 }, lines);
    for (let i = 0; i < 3; i++) expect(await a.keyed(reqOf(0), "ka")).toBeUndefined();
    const refused = await a.keyed(reqOf(0), "ka");
    expect(refused?.limit).toBe("requestsPerKeyMinute");
    expect(refused?.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(refused?.retryAfterS).toBeLessThanOrEqual(60);
    expect(refused?.message).toMatch(/^Too Many Requests: .*\(requestsPerKeyMinute\); retry after \d+ s$/);
    expect(await a.keyed(reqOf(0), "kb")).toBeUndefined();
    // Refused again, and said once in the operator's log.
    expect((await a.keyed(reqOf(0), "ka"))?.limit).toBe("requestsPerKeyMinute");
    expect(lines.filter((l) => l.includes("requestsPerKeyMinute"))).toHaveLength(1);
  });

  it("counts declared body bytes, and a refused body counts neither its bytes nor its request", async () => {
    const a = admission({ bodyMiBPerKeyMinute: 48, requestsPerKeyMinute: 3 });
    expect(await a.keyed(reqOf(40 * MiB), "ka")).toBeUndefined();
    const refused = await a.keyed(reqOf(10 * MiB), "ka");
    expect(refused?.limit).toBe("bodyMiBPerKeyMinute");
    expect(refused?.message).toMatch(/48 MiB of request bodies this minute \(bodyMiBPerKeyMinute\)/);
    // 8 MiB were left, and the refused request used none of the 3 requests.
    expect(await a.keyed(reqOf(8 * MiB), "ka")).toBeUndefined();
    expect(await a.keyed(reqOf(0), "ka")).toBeUndefined();
    expect((await a.keyed(reqOf(0), "ka"))?.limit).toBe("requestsPerKeyMinute");
  });

  it("lets a key spend at most three times the minute's pace within a second, requests and bytes alike", async () => {
    const a = admission({
      requestsPerKeyMinute: 600,
      bodyMiBPerKeyMinute: 1200,
      requestsPerAddressMinute: 600,
    });
    for (let i = 0; i < 30; i++) expect(await a.keyed(reqOf(0), "ka")).toBeUndefined();
    const refused = await a.keyed(reqOf(0), "ka");
    expect(refused?.limit).toBe("requestsPerKeyMinute");
    expect(refused?.message).toMatch(
      /sent 30 requests within 1 s \(three times the pace of 600 a minute\) \(requestsPerKeyMinute\)/,
    );
    expect(refused?.retryAfterS).toBe(1);
    // Bytes: 60 MiB within a second (1200 / 20), the largest body (48 MiB) among them.
    for (const mib of [48, 12]) expect(await a.keyed(reqOf(mib * MiB), "kb")).toBeUndefined();
    const body = await a.keyed(reqOf(MiB), "kb");
    expect(body?.limit).toBe("bodyMiBPerKeyMinute");
    expect(body?.message).toMatch(
      /would pass 60 MiB of request bodies within 1 s \(three times the pace of 1200 MiB a minute/,
    );
    expect(await a.keyed(reqOf(0), "kc")).toBeUndefined();
    // An address's budget is not split: the OAuth routes keep their own bursts.
    for (let i = 0; i < 100; i++) expect(await a.anonymous(reqOf(0), "203.0.113.9")).toBeUndefined();
  });

  it("counts a streamed body's bytes as they arrive", async () => {
    const a = admission({ bodyMiBPerKeyMinute: 2 });
    expect(await a.streamed("ka", MiB)).toBeUndefined();
    expect(await a.streamed("ka", MiB)).toBeUndefined();
    expect((await a.streamed("ka", 1))?.limit).toBe("bodyMiBPerKeyMinute");
    expect(await a.streamed("kb", MiB)).toBeUndefined();
  });

  it("counts requests no credential admitted by address, an IPv6 /64 as one", async () => {
    const a = admission({ requestsPerAddressMinute: 2 });
    const v6 = (host: string) => reqOf(0, host);
    const one = a.sourceOf(v6("2001:db8:1:2::1"));
    expect(a.sourceOf(v6("2001:db8:1:2:ffff::9"))).toBe(one);
    expect(await a.anonymous(v6("2001:db8:1:2::1"), one)).toBeUndefined();
    expect(await a.anonymous(v6("2001:db8:1:2::2"), one)).toBeUndefined();
    expect((await a.anonymous(v6("2001:db8:1:2::3"), one))?.limit).toBe("requestsPerAddressMinute");
    const other = a.sourceOf(v6("2001:db8:1:3::1"));
    expect(await a.anonymous(v6("2001:db8:1:3::1"), other)).toBeUndefined();
  });

  it("believes X-Forwarded-For only from a trusted proxy", () => {
    const a = new Admission(serveLimits({}), new LimitLog(() => {}), (ip) => ip === "127.0.0.1");
    const via = (from: string) =>
      ({ headers: { "x-forwarded-for": "198.51.100.4" }, socket: { remoteAddress: from } }) as never;
    expect(a.sourceOf(via("127.0.0.1"))).toBe("198.51.100.4");
    expect(a.sourceOf(via("192.0.2.1"))).toBe("192.0.2.1");
  });

  it("holds only where strangers reach the server, or where a rate is set", async () => {
    const local = new Admission(
      serveLimits({ requestsPerKeyMinute: 1 }),
      new LimitLog(() => {}),
      undefined,
      false,
    );
    for (let i = 0; i < 5; i++) expect(await local.keyed(reqOf(MiB), "ka")).toBeUndefined();
    expect(ratesSet({ sessions: 5 })).toBe(false);
    expect(ratesSet({ bodyMiBPerAddressMinute: 5 })).toBe(true);
  });

  it("refuses a per-key byte budget smaller than the largest request body", () => {
    expect(() => readServeLimits("bodyMiBPerKeyMinute=47", "F")).toThrow(/at least 48/);
    expect(readServeLimits("bodyMiBPerKeyMinute=48,requestsPerAddressMinute=5", "F")).toEqual({
      bodyMiBPerKeyMinute: 48,
      requestsPerAddressMinute: 5,
    });
  });
});

/** A raw POST to /mcp, its body sent as `chunks` (no Content-Length when `chunked`). */
function post(url: string, key: string | undefined, body: string, chunked = false) {
  return new Promise<{ status: number; retryAfter?: string; text: string }>((resolve, reject) => {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
      ...(chunked ? {} : { "content-length": String(Buffer.byteLength(body)) }),
    };
    const req = request(url, { method: "POST", headers }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => {
        text += c.toString();
      });
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          ...(typeof res.headers["retry-after"] === "string"
            ? { retryAfter: res.headers["retry-after"] }
            : {}),
          text,
        }),
      );
    });
    req.on("error", reject);
    if (chunked) for (let i = 0; i < body.length; i += 256 * 1024) req.write(body.slice(i, i + 256 * 1024));
    else req.write(body);
    req.end();
  });
}

describe("the HTTP transport", () => {
  it("refuses a key's bodies past its byte rate, declared or streamed, while another key is served", async () => {
    const server = await startProbe({ limits: { bodyMiBPerKeyMinute: 1 } });
    try {
      const init = JSON.parse(INIT);
      const pad = (n: number) =>
        JSON.stringify({ ...init, params: { ...init.params, _meta: { pad: "x".repeat(n) } } });
      expect((await post(server.url, KEY_A, pad(700 * 1024))).status).toBe(200);
      const declared = await post(server.url, KEY_A, pad(400 * 1024));
      expect(declared.status).toBe(429);
      expect(declared.retryAfter).toMatch(/^\d+$/);
      expect(declared.text).toMatch(/bodyMiBPerKeyMinute/);
      const streamed = await post(server.url, KEY_A, pad(400 * 1024), true);
      expect(streamed.status).toBe(429);
      expect(streamed.text).toMatch(/bodyMiBPerKeyMinute/);
      expect((await post(server.url, KEY_B, pad(700 * 1024))).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("counts refused credentials by address; a valid key from it is still served", async () => {
    const server = await startProbe({ limits: { requestsPerAddressMinute: 2 } });
    try {
      const bad = () => post(server.url, "lgk_nope", INIT);
      expect((await bad()).status).toBe(401);
      expect((await bad()).status).toBe(401);
      const third = await bad();
      expect(third.status).toBe(429);
      expect(third.text).toMatch(/requestsPerAddressMinute/);
      expect((await post(server.url, KEY_A, INIT)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe("the body's text", () => {
  it("is the same whether the body is ASCII (read as latin1) or not (decoded as UTF-8)", async () => {
    const read = async (value: unknown) => {
      const bytes = Buffer.from(JSON.stringify(value));
      const req = Object.assign(new PassThrough(), { headers: { "content-length": String(bytes.length) } });
      req.end(bytes);
      return readJson(req as unknown as IncomingMessage);
    };
    for (const value of [
      { a: "plain ascii", n: 1 },
      { a: "naïve — 文字 🎵", b: "\u00e9" },
    ])
      expect(await read(value)).toEqual({ ok: true, value });
  });
});
