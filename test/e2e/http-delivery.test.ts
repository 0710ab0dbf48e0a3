/**
 * The built CLI over Streamable HTTP against a sandbox on loopback: a result counts as delivered
 * only once it reached a client still connected (a dropped connection replays the same identity,
 * one dispatch), and SIGTERM answers the calls in flight with their task before the server exits.
 */
import { request as httpRequest } from "node:http";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";

const IMAGE = "POST /api/generate/image";

interface Service {
  sandbox: Sandbox;
  url: string;
  key: string;
  close(): Promise<void>;
}

async function service(timeScale: number): Promise<Service> {
  const sandbox = createSandbox({ timeScale });
  const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  return {
    sandbox,
    url: listening.url,
    key: sandbox.addKey({ scopes: ["read", "generate"] }),
    close: async () => {
      await listening.close();
      await sandbox.close();
    },
  };
}

async function connect(url: string, key: string) {
  const client = new Client({ name: "test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** POSTs a tools/call on a session with node:http and destroys the connection once `drop` says so. */
function callThenDrop(url: string, key: string, sessionId: string, body: object, drop: () => Promise<void>) {
  const target = new URL(url);
  return new Promise<void>((resolve, reject) => {
    const req = httpRequest({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-11-25",
      },
    });
    req.on("error", () => resolve());
    req.on("response", (res) => res.resume());
    req.end(JSON.stringify(body));
    drop().then(() => {
      // The host drops the connection without sending notifications/cancelled.
      req.destroy();
      resolve();
    }, reject);
  });
}

describe("HTTP delivery (built CLI)", () => {
  let svc: Service;
  let server: Started;
  const iso = isolatedEnv();

  beforeAll(async () => {
    svc = await service(50);
    server = await startHttpCli([], { ...iso.env, GENERATION_BASE_URL: svc.url });
  });
  afterAll(async () => {
    await server?.stop();
    await svc?.close();
    iso.cleanup();
  });

  it("treats a dropped connection as a cancellation: the identical call replays the same identity, one dispatch", async () => {
    const a = await connect(server.url, svc.key);
    const args = { model: "sandbox-image-fast", prompt: "[sandbox:slow] a dropped harbour", wait: 1 };
    const before = svc.sandbox.stats.dispatches(IMAGE);
    await callThenDrop(
      server.url,
      svc.key,
      a.transport.sessionId ?? "",
      { jsonrpc: "2.0", id: 77, method: "tools/call", params: { name: "generate_image", arguments: args } },
      () => until(() => svc.sandbox.stats.dispatches(IMAGE) === before + 1),
    );
    // Give the server time to finish the call (its wait is 1 s) and write its result into the
    // dead connection.
    await new Promise((r) => setTimeout(r, 2_500));

    const again = await a.client.callTool({ name: "generate_image", arguments: { ...args, wait: 0 } });
    expect(again.isError).toBeFalsy();
    const { idempotencyKey } = again.structuredContent as { idempotencyKey: string };
    expect(svc.sandbox.stats.dispatches(IMAGE)).toBe(before + 1);
    const listed = await a.client.callTool({ name: "list_requests", arguments: {} });
    const rows = (listed.structuredContent as { requests: Array<{ idempotencyKey: string }> }).requests;
    expect(rows.map((r) => r.idempotencyKey)).toEqual([idempotencyKey]);

    // Delivered this time: "make another one" with the same arguments is new work.
    const third = await a.client.callTool({ name: "generate_image", arguments: { ...args, wait: 0 } });
    expect((third.structuredContent as { idempotencyKey: string }).idempotencyKey).not.toBe(idempotencyKey);
    expect(svc.sandbox.stats.dispatches(IMAGE)).toBe(before + 2);
    await a.client.close();
  });

  it("does the same on 2026-07-28, where each request is served on its own", async () => {
    // The host's fetch is cut mid-call (the connection closes; no cancel is sent).
    const cut = new AbortController();
    const client = new Client(
      { name: "test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${svc.key}` } },
        fetch: ((url: string | URL, init?: RequestInit) =>
          fetch(
            url,
            String(init?.body ?? "").includes("modern drop") ? { ...init, signal: cut.signal } : init,
          )) as typeof fetch,
      }),
    );
    const args = { model: "sandbox-image-fast", prompt: "[sandbox:slow] a modern drop", wait: 1 };
    const before = svc.sandbox.stats.dispatches(IMAGE);
    const first = client.callTool({ name: "generate_image", arguments: args }).catch((e: unknown) => e);
    await until(() => svc.sandbox.stats.dispatches(IMAGE) === before + 1);
    cut.abort();
    expect(await first).toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 2_500));

    const plain = await connect(server.url, svc.key);
    const again = await plain.client.callTool({ name: "generate_image", arguments: { ...args, wait: 0 } });
    expect(again.isError).toBeFalsy();
    expect(svc.sandbox.stats.dispatches(IMAGE)).toBe(before + 1);
    await plain.client.close();
    await client.close();
  });

  it("serves GET /healthz: 200 with a usable ledger, no secrets in the body", async () => {
    const res = await fetch(new URL("/healthz", server.url));
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ status: "ok" });
    expect(text).not.toContain(iso.dir);
    expect(text).not.toContain(svc.key.slice(4));
  });
});

describe("HTTP /healthz with an unusable ledger (built CLI)", () => {
  it("answers 503 without the store's path or error", async () => {
    const iso = isolatedEnv();
    const store = "/proc/generation-mcp-cannot-write/ledger.sqlite";
    const server = await startHttpCli(["--sandbox"], { ...iso.env, GENERATION_STORE: `sqlite://${store}` });
    try {
      const res = await fetch(new URL("/healthz", server.url));
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ status: "unavailable" });
      expect(text).not.toContain("/proc");
    } finally {
      await server.stop();
      iso.cleanup();
    }
  });
});

describe("HTTP graceful shutdown (built CLI)", () => {
  it("answers a call waiting on a slow task with its task ID and identity when the server gets SIGTERM", async () => {
    const svc = await service(1);
    const iso = isolatedEnv();
    const server = await startHttpCli([], { ...iso.env, GENERATION_BASE_URL: svc.url });
    try {
      const a = await connect(server.url, svc.key);
      const call = a.client.callTool(
        {
          name: "generate_image",
          arguments: { model: "sandbox-image-fast", prompt: "[sandbox:slow] a long harbour", wait: 120 },
        },
        { timeout: 150_000 },
      );
      await until(() => svc.sandbox.stats.dispatches(IMAGE) === 1);
      await new Promise((r) => setTimeout(r, 300));
      const exited = new Promise<number | null>((r) => server.child.once("exit", (code) => r(code)));
      const signalled = Date.now();
      server.child.kill("SIGTERM");
      const result = await call;
      expect(Date.now() - signalled).toBeLessThan(3_000);
      expect(result.isError).toBeFalsy();
      const s = result.structuredContent as { idempotencyKey: string; task: { id: string; status: string } };
      expect(s.task.id).toMatch(/^task_/);
      expect(["queued", "processing"]).toContain(s.task.status);
      expect(s.idempotencyKey).toMatch(/^gm-/);
      const text = (result.content as Array<{ type: string; text?: string }>)[0]?.text ?? "";
      expect(text).toContain(s.task.id);
      expect(text).toContain(s.idempotencyKey);
      expect(await exited).toBe(0);
    } finally {
      await server.stop();
      await svc.close();
      iso.cleanup();
    }
  });
});
