/**
 * The HTTP transport on its own, with a one-tool server per key (http-probe.ts): the guards (Host,
 * Origin, key), session binding and both protocol eras; http-sessions.test.ts has the session caps. The real tools over HTTP are covered by http-cli.test.ts.
 */
import { request as httpRequest } from "node:http";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpServerHandle, isLoopbackHost } from "../../src/transports/http-server.js";
import { deliveriesSettled, hash, INIT, KEY_A, KEY_B, KEY_ENV, startProbe, whoami } from "./http-probe.js";

const settled = deliveriesSettled;

let handle: HttpServerHandle;
const errors: Error[] = [];

beforeAll(async () => {
  handle = await startProbe({
    defaultApiKey: KEY_ENV,
    onError: (e) => errors.push(e),
  });
});
afterAll(() => handle.close());

async function connect(key: string | undefined, modern = false) {
  const client = new Client(
    { name: "test", version: "1.0.0" },
    modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  const headers: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` };
  const transport = new StreamableHTTPClientTransport(new URL(handle.url), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

function post(headers: Record<string, string>, body = INIT) {
  return fetch(handle.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body,
  });
}

/** node:http, because fetch will not let a test forge the Host header. */
function rawPost(headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const url = new URL(handle.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers },
      (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(INIT);
  });
}

describe("HTTP guards", () => {
  it("refuses a foreign Origin with 403 and a JSON error", async () => {
    const res = await post({ origin: "http://evil.example", authorization: `Bearer ${KEY_A}` });
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/Origin/);
  });

  it("refuses an unparseable or opaque Origin", async () => {
    expect((await post({ origin: "null" })).status).toBe(403);
  });

  it("accepts a loopback Origin on any port (a local Inspector)", async () => {
    const res = await post({ origin: "http://localhost:6274" });
    expect(res.status).toBe(200);
  });

  it("answers a loopback page's CORS preflight, and a foreign page's with 403", async () => {
    const preflight = (origin: string) =>
      fetch(handle.url, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type",
        },
      });
    const ok = await preflight("http://localhost:6274");
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe("http://localhost:6274");
    expect(ok.headers.get("access-control-allow-headers")).toContain("authorization");
    const evil = await preflight("http://evil.example");
    expect(evil.status).toBe(403);
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("refuses a Host that is not this server (DNS rebinding)", async () => {
    const res = await rawPost({ host: "evil.example:80", "content-type": "application/json" });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error.message).toMatch(/Host/);
  });

  it("refuses a malformed Bearer key with 401 naming the Authorization header, without echoing it or a sign-in challenge", async () => {
    const bad = `lgk_${"Z".repeat(64)}`;
    const res = await post({ authorization: `Bearer ${bad}` });
    expect(res.status).toBe(401);
    // mcp-remote takes a Bearer challenge as a cue to sign in (OAuth) and hides the message.
    expect(res.headers.get("www-authenticate")).toBeNull();
    const text = await res.text();
    expect(text).not.toContain(bad);
    expect(JSON.parse(text).error.message).toMatch(/Authorization header/);
    expect(text).not.toContain("GENERATION_API_KEY");
  });

  it("refuses deeply nested JSON with 400, before classifying it", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const body = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":${deep}}}`;
    const res = await post({}, body);
    expect(res.status).toBe(400);
    const shallow = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":${"[".repeat(70)}${"]".repeat(70)}}}`;
    const refused = await post({}, shallow);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/64 levels/);
    expect(errors.filter((e) => /stack/i.test(e.message))).toEqual([]);
  });

  it("answers 404 off the /mcp path", async () => {
    const res = await fetch(new URL("/other", handle.url));
    expect(res.status).toBe(404);
  });

  it("answers 400 to a 2025 request with no session that is not initialize", async () => {
    const res = await post({}, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
    expect(res.status).toBe(400);
  });

  it("answers 404 to an unknown session", async () => {
    const res = await post(
      { "mcp-session-id": "no-such-session" },
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    );
    expect(res.status).toBe(404);
  });

  it("reads bodies past the SDK's 4 MiB default (base64 uploads) and refuses past 48 MiB with 413", async () => {
    const init = JSON.parse(INIT);
    init.params.clientInfo.name = "x".repeat(8 * 1024 * 1024);
    expect((await post({}, JSON.stringify(init))).status).toBe(200);
    init.params.clientInfo.name = "x".repeat(49 * 1024 * 1024);
    expect((await post({}, JSON.stringify(init))).status).toBe(413);
  });

  it("knows loopback hosts", () => {
    expect(["127.0.0.1", "127.1.2.3", "localhost", "::1"].every(isLoopbackHost)).toBe(true);
    expect(["0.0.0.0", "::", "192.168.1.2", "example.com"].some(isLoopbackHost)).toBe(false);
  });
});

describe("HTTP sessions and keys", () => {
  it("binds each 2025-11-25 session to the key it opened with", async () => {
    const a = await connect(KEY_A);
    const b = await connect(KEY_B);
    expect(a.client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
    expect(await whoami(a.client)).toBe(hash(KEY_A));
    expect(await whoami(b.client)).toBe(hash(KEY_B));
    expect(a.transport.sessionId).toBeDefined();
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);

    // Session A's ID with key B: refused, not served under either key, and answered exactly as an
    // unknown session is (whether the session exists is not B's to learn).
    const hijack = await post(
      {
        authorization: `Bearer ${KEY_B}`,
        "mcp-session-id": a.transport.sessionId ?? "",
        "mcp-protocol-version": "2025-11-25",
      },
      JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: "whoami", arguments: {} },
      }),
    );
    expect(hijack.status).toBe(404);
    const hijackText = await hijack.text();
    expect(hijackText).not.toContain(hash(KEY_A));
    const unknown = await post(
      {
        authorization: `Bearer ${KEY_B}`,
        "mcp-session-id": "00000000-0000-4000-8000-000000000000",
        "mcp-protocol-version": "2025-11-25",
      },
      JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: "whoami", arguments: {} },
      }),
    );
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toBe(hijackText);
    await a.client.close();
    await b.client.close();
  });

  it("uses GENERATION_API_KEY for a session without a Bearer key when bound to loopback", async () => {
    const env = await connect(undefined);
    expect(await whoami(env.client)).toBe(hash(KEY_ENV));
    await env.client.close();
  });

  it("serves 2026-07-28 per request, each under the key of that request", async () => {
    const a = await connect(KEY_A, true);
    expect(a.client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(a.transport.sessionId).toBeUndefined();
    expect(await whoami(a.client)).toBe(hash(KEY_A));
    const tools = await a.client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(["whoami", "channel"]);
    await a.client.close();
  });

  it("settles a call's delivery on the exchange that carried it, in both eras", async () => {
    for (const modern of [false, true]) {
      settled.length = 0;
      const a = await connect(KEY_A, modern);
      const result = await a.client.callTool({ name: "channel", arguments: {} });
      expect((result.content as { text: string }[])[0]?.text).toBe("expected");
      // Written to a live client: the exchange's channel says so once its response is flushed.
      for (let i = 0; i < 100 && settled.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(settled).toEqual([true]);
      await a.client.close();
    }
  });

  it("ends a session on DELETE", async () => {
    const a = await connect(KEY_A);
    const before = handle.sessionCount();
    await a.transport.terminateSession();
    expect(handle.sessionCount()).toBe(before - 1);
    await a.client.close();
  });
});
