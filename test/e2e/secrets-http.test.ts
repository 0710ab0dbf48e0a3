/**
 * A key the service echoes back never leaves the process or reaches the ledger. The shipped bundle
 * on stdio, against `generation-mcp sandbox` over loopback HTTP whose injected faults quote the
 * request's own key (its hex upper-cased, with and without the prefix, and base64 of it): a paid
 * call, an upload, a task read as a tool and as a resource. No result (text, structuredContent,
 * _meta), progress message, resource error, stderr line or byte of the ledger's files holds it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderImage } from "../../src/sandbox/media/png.js";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { connectSandboxedCli, type SandboxedCli } from "../helpers/sandboxed-cli.js";

const KEY = SANDBOX_API_KEY;
const HEX = KEY.slice(4);
const BASE64 = Buffer.from(KEY).toString("base64");

/** The key in any form the sandbox echoes: any 16 of its digits in any case, or its base64. */
function leak(text: string): string | undefined {
  const lower = text.toLowerCase();
  if (lower.includes(HEX.slice(0, 16))) return "hex digits";
  if (text.includes(BASE64.slice(4, 40))) return "base64";
  return undefined;
}

type Result = {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: unknown;
  _meta?: unknown;
};
const textOf = (r: Result) => r.content.map((c) => c.text ?? "").join("\n");

let cli: SandboxedCli;
const seen: string[] = [];

/** Every answer the host received, kept whole so that every field is searched. */
const keep = (label: string, value: unknown): void => {
  seen.push(`${label}: ${JSON.stringify(value)}`);
};

async function inject(route: string, fault: Record<string, unknown>, times = 1): Promise<void> {
  const r = await fetch(`${cli.sandboxUrl}/sandbox/faults`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ route, fault: { ...fault, echoKey: true }, times }),
  });
  expect(r.status).toBe(201);
}

async function call(name: string, args: Record<string, unknown>): Promise<Result> {
  const r = (await cli.client.callTool(
    { name, arguments: args },
    { onprogress: (p) => keep(`${name} progress`, p) },
  )) as Result;
  keep(name, r);
  return r;
}

beforeAll(async () => {
  cli = await connectSandboxedCli("secrets-test", KEY);
}, 30_000);
afterAll(() => cli?.close());

describe("a key echoed by the service, through the bundled CLI over loopback", () => {
  it("the sandbox really echoes it: the test would see a leak", async () => {
    await inject("POST /api/generate/image", { status: 422, code: "INVALID_REQUEST" });
    const raw = await fetch(`${cli.sandboxUrl}/api/generate/image`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: "{}",
    }).then((r) => r.text());
    expect(raw).toContain(HEX.toUpperCase());
    expect(raw).toContain(BASE64);
    expect(leak(raw)).toBeDefined();
  });

  it("a paid call refused with the key: the result says what happened, without it", async () => {
    await inject("POST /api/generate/image", { status: 422, code: "INVALID_REQUEST" });
    const r = await call("generate_image", {
      model: "sandbox-image-fast",
      prompt: "a refused lighthouse",
      wait: 0,
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^INVALID_REQUEST: .*Injected fault: HTTP 422\. Key \[redacted\]/);
    expect(textOf(r)).toMatch(/Identity \(idempotencyKey\): gm-/);
  });

  it("a paid call retried after an echoed 503, then accepted: lastError was stored without the key", async () => {
    await inject("POST /api/generate/image", { status: 503, code: "TEMPORARILY_UNAVAILABLE", retryAfter: 0 });
    const r = await call("generate_image", {
      model: "sandbox-image-fast",
      prompt: "a retried lighthouse",
      wait: 0,
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    const listed = await call("list_requests", {});
    // The refused call's closedReason and this one's lastError, each as stored: scrubbed, not dropped.
    const records = JSON.stringify(listed.structuredContent);
    expect(records).toMatch(/"closedReason":\{[^}]*"code":"INVALID_REQUEST"[^}]*\[redacted\]/);
  });

  it("an upload refused with the key", async () => {
    await inject("POST /api/generate/assets", { status: 422, code: "INVALID_REQUEST" });
    const png = renderImage("an upload the service refuses", "1:1");
    const r = await call("upload_asset", { data: png.toString("base64"), mimeType: "image/png" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("[redacted]");
  });

  it("a task read as a tool and as a resource, failing with the key", async () => {
    const route = "GET /api/generate/tasks/{id}";
    // Reads are retried: every attempt fails, so the echo reaches the caller.
    await inject(route, { status: 500, code: "INTERNAL_ERROR" }, 4);
    const polled = await call("poll_task", { taskId: "task_echo" });
    expect(polled.isError).toBe(true);
    expect(textOf(polled)).toContain("[redacted]");

    await inject(route, { status: 500, code: "INTERNAL_ERROR" }, 4);
    const failed = await cli.client.readResource({ uri: "generation://tasks/task_echo" }).then(
      () => "read",
      (e: Error) => e.message,
    );
    keep("resource 500", failed);
    expect(failed).toContain("[redacted]");

    await inject(route, { status: 404, code: "NOT_FOUND" });
    const missing = await cli.client.readResource({ uri: "generation://tasks/task_echo" }).then(
      () => "read",
      (e: Error) => e.message,
    );
    keep("resource 404", missing);
    expect(missing).toContain("[redacted]");
  });

  it("nothing the host received holds the key: text, structuredContent, _meta, progress, resource errors", () => {
    expect(seen.length).toBeGreaterThan(5);
    // The retried call reported its replay as progress: those messages are searched too.
    expect(seen.some((line) => line.startsWith("generate_image progress"))).toBe(true);
    for (const line of seen) expect(leak(line), line).toBeUndefined();
  });

  it("nothing on stderr holds the key", () => {
    expect(leak(cli.stderr()), cli.stderr()).toBeUndefined();
  });

  it("no byte of the ledger's files holds the key", () => {
    const files = ["ledger.sqlite", "ledger.sqlite-wal"].map((f) => join(cli.dir, f)).filter(existsSync);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(leak(readFileSync(file).toString("latin1")), file).toBeUndefined();
    // The ledger's summaries are there, scrubbed: the test reads the right file.
    expect(files.map((f) => readFileSync(f).toString("latin1")).join("")).toContain("[redacted]");
  });
});
