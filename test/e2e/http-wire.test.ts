/**
 * The protocol revisions on the wire, by hand (built CLI, raw HTTP and raw stdio):
 * - `server/discover` lists every revision the endpoint serves: 2026-07-28, and 2025-11-25 (and
 *   older) through `initialize` on the same endpoint; so does stdio;
 * - a 2026-07-28 request that still carries an `Mcp-Session-Id` (a live 2025 session's, or one long
 *   gone) is served as the sessionless request it is, not refused as "Unsupported protocol
 *   version: 2026-07-28" or "Session not found";
 * - a body over the limit is refused naming the limit as people read it (48 MiB).
 */
import { spawn } from "node:child_process";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, initializeRequest, isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";

const MODERN = "2026-07-28";
const envelope = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw-wire", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

let server: Started;
const iso = isolatedEnv();
beforeAll(async () => {
  server = await startHttpCli(["--sandbox"], iso.env);
});
afterAll(async () => {
  await server?.stop();
  iso.cleanup();
});

/** One 2026-07-28 request by hand: its headers and its `_meta` envelope. */
async function modern(method: string, headers: Record<string, string> = {}) {
  const res = await fetch(server.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { _meta: envelope } }),
  });
  const text = await res.text();
  // A JSON answer, or one SSE event carrying it.
  const json = text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "{}");
  return {
    status: res.status,
    body: JSON.parse(json) as { result?: Record<string, unknown>; error?: unknown },
  };
}

async function openSession(): Promise<string> {
  const res = await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(initializeRequest()),
  });
  await res.text();
  const id = res.headers.get("mcp-session-id");
  expect(id).toBeTruthy();
  return id ?? "";
}

describe("server/discover", () => {
  it("over HTTP lists 2026-07-28 and 2025-11-25, the revisions this endpoint serves", async () => {
    const { status, body } = await modern("server/discover");
    expect(status).toBe(200);
    const versions = body.result?.supportedVersions as string[];
    expect(versions[0]).toBe(MODERN);
    expect(versions).toContain("2025-11-25");
    // And 2025-11-25 is really served here: initialize opens a session.
    expect(await openSession()).not.toBe("");
  });

  it("over stdio lists the same", async () => {
    const child = spawn(process.execPath, [CLI, "--sandbox"], {
      env: iso.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    try {
      const answer = new Promise<Record<string, unknown>>((resolve) => {
        let out = "";
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString();
          const line = out.split("\n").find((l) => l.includes('"id":3'));
          if (line) resolve(JSON.parse(line) as Record<string, unknown>);
        });
      });
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 3, method: "server/discover", params: { _meta: envelope } })}\n`,
      );
      const result = (await answer).result as { supportedVersions: string[] };
      expect(result.supportedVersions).toEqual(expect.arrayContaining([MODERN, "2025-11-25"]));
    } finally {
      child.kill();
    }
  });
});

describe("a 2026-07-28 request carrying a stale Mcp-Session-Id", () => {
  it("is served when the id names a live 2025 session", async () => {
    const id = await openSession();
    const { status, body } = await modern("tools/list", { "mcp-session-id": id });
    expect(body.error, JSON.stringify(body)).toBeUndefined();
    expect(status).toBe(200);
    expect((body.result?.tools as unknown[] | undefined)?.length).toBeGreaterThan(10);
  });

  it("is served when the id names no session at all", async () => {
    const { status, body } = await modern("tools/list", {
      "mcp-session-id": "00000000-0000-4000-8000-000000000000",
    });
    expect(body.error, JSON.stringify(body)).toBeUndefined();
    expect(status).toBe(200);
  });
});

describe("a body over the limit", () => {
  it("is refused with 413 naming the limit in MiB", async () => {
    const url = new URL(server.url);
    // The length is declared, not sent: the limit is checked on the header first.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "content-length": String(60 * 1024 * 1024),
          },
        },
        (res) => {
          let body = "";
          res.on("data", (c: Buffer) => {
            body += c.toString();
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on("error", reject);
      req.write("{");
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toContain("the limit is 48 MiB");
    expect(answer.body).not.toMatch(/\d{7,}/);
  });
});
