/**
 * The built CLI, spawned as hosts spawn it: help, version, refusals, and a stdio session whose
 * stdout must carry nothing but JSON-RPC.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { CLI, connectCli, isolatedEnv, ROOT, rawStdio, runCli } from "../helpers/cli.js";
import { portabilityProblems } from "../helpers/schemas.js";
import { CONTRACT_TOOLS } from "../helpers/tools.js";

const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const iso = isolatedEnv();
afterAll(() => iso.cleanup());

describe("CLI commands", () => {
  it("prints usage for --help and exits 0", async () => {
    const r = await runCli(["--help"], iso.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage:/);
    expect(r.stdout).toMatch(/--transport stdio\|http/);
    expect(r.stdout).toMatch(/GENERATION_API_KEY/);
    expect(r.stderr).toBe("");
  });

  it("prints the package version for --version", async () => {
    const r = await runCli(["--version"], iso.env);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
  });

  it("refuses a malformed key with exit 2 and one stderr line that does not contain it", async () => {
    const secret = `lgk_${"C0FFEE".repeat(10)}abcd`;
    const r = await runCli([], {
      ...iso.env,
      GENERATION_BASE_URL: "https://api.example.com",
      GENERATION_API_KEY: secret,
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/GENERATION_API_KEY/);
    expect(r.stderr).not.toContain(secret);
    expect(r.stderr).not.toContain("C0FFEE");
  });

  it("names an unknown flag in one plain line that points to --help", async () => {
    const r = await runCli(["--sandbox", "--verbose"], iso.env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("generation-mcp: command line: unknown option '--verbose' (see --help)\n");
  });

  it.each([
    [[], { GENERATION_API_KEY: `lgk_${"0".repeat(64)}` }, /GENERATION_BASE_URL: required/],
    [
      ["--transport", "carrier-pigeon"],
      { GENERATION_BASE_URL: "http://127.0.0.1:9", GENERATION_API_KEY: `lgk_${"0".repeat(64)}` },
      /--transport: expected 'stdio' or 'http'/,
    ],
    [["--sandbox", "--port", "-1"], {}, /--port|command line/],
    [["--sandbox", "--bogus"], {}, /--bogus/],
    [["--sandbox"], { GENERATION_WAIT_SECONDS: "forever" }, /GENERATION_WAIT_SECONDS: expected seconds/],
  ] as [string[], Record<string, string>, RegExp][])(
    "refuses %j with exit 2 and one line",
    async (args, env, pattern) => {
      const r = await runCli(args, { ...iso.env, ...env });
      expect(r.code).toBe(2);
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(pattern);
    },
  );
});

describe("stdio", () => {
  it("serves every tool over stdio with --sandbox", async () => {
    const { client } = await connectCli({ args: [CLI, "--sandbox"], env: iso.env });
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of CONTRACT_TOOLS) expect(names).toContain(name);
      // What the Inspector's --strict mode warns of: type arrays and untyped properties.
      const problems = tools.flatMap((t) => [
        ...portabilityProblems(t.inputSchema, `${t.name} input`),
        ...portabilityProblems(t.outputSchema, `${t.name} output`),
      ]);
      expect(problems).toEqual([]);
      const models = await client.callTool({ name: "list_models", arguments: {} });
      expect(models.isError).toBeFalsy();
      expect((models.structuredContent as { models: unknown[] }).models.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it("speaks 2026-07-28 over stdio too", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "--sandbox"],
      env: iso.env,
    });
    const client = new Client(
      { name: "test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(transport);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      const listed = await client.callTool({ name: "list_requests", arguments: {} });
      expect(listed.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it("reports an unusable ledger on stderr and keeps serving read-only tools", async () => {
    const blocker = join(iso.dir, "not-a-directory");
    writeFileSync(blocker, "");
    const { client, stderr } = await connectCli({
      args: [CLI, "--sandbox"],
      // A regular file where the store's directory should be: the ledger cannot be created there.
      env: { ...iso.env, GENERATION_STORE: `sqlite://${join(blocker, "ledger.sqlite")}` },
    });
    try {
      const models = await client.callTool({ name: "list_models", arguments: {} });
      expect(models.isError).toBeFalsy();
      const deadline = Date.now() + 10_000;
      while (!stderr().includes("ledger") && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect(stderr()).toMatch(/ledger is not usable/);
      expect(stderr().trimEnd().split("\n")).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it("warns once at start about a GENERATION_FILES directory that is not there, and serves", async () => {
    const { client, stderr } = await connectCli({
      args: [CLI, "--sandbox"],
      env: { ...iso.env, GENERATION_FILES: [iso.dir, join(iso.dir, "Pictres")].join(delimiter) },
    });
    try {
      const models = await client.callTool({ name: "list_models", arguments: {} });
      expect(models.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    expect(stderr()).toContain(
      "generation-mcp: GENERATION_FILES: entry 2 of 2 does not exist; tools will not read or save there\n",
    );
    expect(stderr().match(/GENERATION_FILES/g)).toHaveLength(1);
  });

  it("reads messages past the SDK's 10 MB default (base64 uploads over stdio)", async () => {
    const { child, send, stdout } = rawStdio(iso.env);
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "ping",
      params: { _meta: { padding: "x".repeat(12 * 1024 * 1024) } },
    });
    const deadline = Date.now() + 20_000;
    while (!stdout().includes('"id":2') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const exited = new Promise((r) => child.once("exit", r));
    child.stdin.end();
    await exited;
    expect(stdout()).toContain('"id":2');
  });

  it("writes nothing but JSON-RPC lines on stdout, even around a failing call", async () => {
    const { child, send, stdout } = rawStdio(iso.env);
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_models", arguments: {} } });
    send({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "poll_task", arguments: { taskId: "" } },
    });
    send({ jsonrpc: "2.0", id: 5, method: "no/such/method" });
    const deadline = Date.now() + 20_000;
    // Answers may come in any order; stdin closes only once all five are in (in-flight calls would be dropped).
    const answered = () =>
      [1, 2, 3, 4, 5].every((id) => stdout().includes(`"id":${id}}`) || stdout().includes(`"id":${id},`));
    while (!answered() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const exited = new Promise<number | null>((r) => child.once("exit", r));
    child.stdin.end();
    expect(await exited).toBe(0);

    const lines = stdout()
      .split("\n")
      .filter((l) => l !== "");
    expect(lines.length).toBeGreaterThanOrEqual(5);
    expect(answered()).toBe(true);
    for (const line of lines) {
      const message = JSON.parse(line) as { jsonrpc?: string };
      expect(message.jsonrpc).toBe("2.0");
    }
    expect(stdout().endsWith("\n")).toBe(true);
  });
});

describe("stdio against a service at GENERATION_BASE_URL", () => {
  let sandbox: Sandbox;
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    sandbox = createSandbox({ timeScale: 50 });
    ({ url, close } = await sandbox.listen({ host: "127.0.0.1", port: 0 }));
  });
  afterAll(async () => {
    await close();
    await sandbox.close();
  });

  it("keeps the API key out of stderr and every result", async () => {
    const key = sandbox.addKey({ scopes: ["read", "generate"] });
    const { client, stderr } = await connectCli({
      args: [CLI],
      env: { ...iso.env, GENERATION_BASE_URL: url, GENERATION_API_KEY: key },
    });
    const results: unknown[] = [];
    try {
      results.push(await client.callTool({ name: "list_models", arguments: {} }));
      results.push(
        await client.callTool({
          name: "generate_image",
          arguments: { model: "sandbox-image-fast", prompt: "a lighthouse at dusk", wait: 0 },
        }),
      );
      results.push(await client.callTool({ name: "list_requests", arguments: {} }));
      results.push(await client.callTool({ name: "poll_task", arguments: { taskId: "task_missing" } }));
    } finally {
      await client.close();
    }
    const requests = (results[2] as { structuredContent: { requests: unknown[] } }).structuredContent
      .requests;
    expect(requests).toHaveLength(1);
    expect(JSON.stringify(results)).not.toContain(key);
    expect(JSON.stringify(results)).not.toContain(key.slice(4));
    expect(stderr()).not.toContain(key.slice(4));
  });
});
