/**
 * The built CLI over Streamable HTTP against a sandbox listening on loopback: two sessions with two
 * keys see only their own records, a session cannot be used with another key, browsers from other
 * origins are refused, and no key reaches the process's output.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { initializeRequest, isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";

interface RequestRow {
  idempotencyKey: string;
  tool: string;
  state: string;
  taskId?: string;
}

let sandbox: Sandbox;
let closeSandbox: () => Promise<void>;
let server: Started;
let keyA: string;
let keyB: string;
const iso = isolatedEnv();

beforeAll(async () => {
  sandbox = createSandbox({ timeScale: 50 });
  const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  closeSandbox = listening.close;
  keyA = sandbox.addKey({ scopes: ["read", "generate"] });
  keyB = sandbox.addKey({ scopes: ["read", "generate"] });
  // No GENERATION_API_KEY: every session brings its own.
  server = await startHttpCli([], { ...iso.env, GENERATION_BASE_URL: listening.url });
});

afterAll(async () => {
  await server?.stop();
  await closeSandbox?.();
  await sandbox?.close();
  iso.cleanup();
});

async function connect(key: string, modern = false) {
  const client = new Client(
    { name: "test", version: "1.0.0" },
    modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

async function requests(client: Client): Promise<RequestRow[]> {
  const result = await client.callTool({ name: "list_requests", arguments: {} });
  expect(result.isError).toBeFalsy();
  return (result.structuredContent as { requests: RequestRow[] }).requests;
}

describe("HTTP CLI", () => {
  it("prints the endpoint and how to connect the Inspector and Claude Desktop", () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(server.stdout()).toContain(
      `npx @modelcontextprotocol/inspector --transport http --server-url ${server.url}`,
    );
    expect(server.stdout()).toContain("Claude Desktop");
    // No GENERATION_API_KEY here: every session must bring its key, and the start line says only that.
    expect(server.stdout()).toMatch(/^ {2}auth: key \(each session sends its service key as [^;]*\)$/m);
  });

  it("keeps two keys' records apart, in both protocol eras", async () => {
    const a = await connect(keyA);
    const b = await connect(keyB, true);
    try {
      const submitted = await a.client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt: "key A's harbour", wait: 0 },
      });
      expect(submitted.isError).toBeFalsy();
      const mine = (submitted.structuredContent as { idempotencyKey: string }).idempotencyKey;

      await b.client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt: "key B's meadow", wait: 0 },
      });

      const seenByA = await requests(a.client);
      const seenByB = await requests(b.client);
      expect(seenByA.map((r) => r.idempotencyKey)).toEqual([mine]);
      expect(seenByB).toHaveLength(1);
      expect(seenByB[0]?.idempotencyKey).not.toBe(mine);

      // B cannot read A's task either: the service scopes tasks to their key.
      const taskId = (submitted.structuredContent as { task: { id: string } }).task.id;
      const peek = await b.client.callTool({ name: "poll_task", arguments: { taskId } });
      expect(peek.isError).toBe(true);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it("refuses a request on a session with another key exactly as for an unknown session (404)", async () => {
    const a = await connect(keyA);
    try {
      const res = await fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${keyB}`,
          "mcp-session-id": a.transport.sessionId ?? "",
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name: "list_requests", arguments: {} },
        }),
      });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
        "Session not found; initialize a new one",
      );
    } finally {
      await a.client.close();
    }
  });

  it("refuses a foreign Origin with 403", async () => {
    const res = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        origin: "http://evil.example",
        authorization: `Bearer ${keyA}`,
      },
      body: "{}",
    });
    expect(res.status).toBe(403);
  });

  it("refuses a session without a key when none is configured", async () => {
    const res = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(initializeRequest("raw")),
    });
    expect(res.status).toBe(401);
  });

  it("keeps serving a real key's initialize while a made-up key holds its full share of idle sessions", async () => {
    const madeUp = `lgk_${"7".repeat(64)}`;
    const init = (key: string) =>
      fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${key}`,
        },
        body: JSON.stringify(initializeRequest("idle")),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 110; i++) {
      const res = await init(madeUp);
      statuses.push(res.status);
      await res.body?.cancel();
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.slice(100).every((s) => s === 503)).toBe(true);
    const real = await connect(keyA);
    try {
      expect(await requests(real.client)).toBeInstanceOf(Array);
    } finally {
      await real.client.close();
    }
  });

  it("answers deeply nested JSON with 400, not 500", async () => {
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const res = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${keyA}`,
      },
      body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"n":${deep}}}`,
    });
    expect(res.status).toBe(400);
  });

  it("never writes a key to stdout or stderr", () => {
    for (const key of [keyA, keyB]) {
      expect(server.stdout()).not.toContain(key.slice(4));
      expect(server.stderr()).not.toContain(key.slice(4));
    }
  });
});
