/**
 * What a new user types first, run as written:
 * - the README's OAuth "try it on one machine" line, in a shell from this clone: it serves the
 *   OAuth metadata and the 401 challenge at the URL it names;
 * - `--auth oauth` with its settings missing: every missing one named in the same run, one line
 *   each (exit code 2);
 * - a plain number out of range is shown, for every numeric setting alike (`GENERATION_MAX_GEMS=-5`
 *   as `GENERATION_WAIT_SECONDS=700`);
 * - mcp.json.example's HTTP entry against `npm start`: it connects and every tool works (no
 *   placeholder key that the sandbox refuses).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, describe, expect, it } from "vitest";
import { isolatedEnv, ROOT, runCli, startHttpCli } from "../helpers/cli.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8").replace(/\s*\n\s*/g, " ");
const iso = isolatedEnv();
afterAll(() => iso.cleanup());

/** Whether something already listens on 127.0.0.1:`port`. */
const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

/** Runs a shell line as a user would (its own process group, so npm and the server stop together). */
function shell(line: string, env: Record<string, string>): { child: ChildProcess; out: () => string } {
  const child = spawn("bash", ["-c", line], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  return { child, out: () => out };
}

async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid, "SIGTERM");
  await exited;
}

describe("README: OAuth on one machine", () => {
  const line = /To try it on one machine[^`]*`([^`]+)`/.exec(readme)?.[1] ?? "";

  it("is a command that runs from the clone as written", async () => {
    expect(line).toMatch(/npm start -- --auth oauth$/);
    const url = /GENERATION_PUBLIC_URL=(\S+)/.exec(line)?.[1] ?? "";
    expect(url).toBe("http://127.0.0.1:3333");
    // The line names its port; a server already there would answer in its place.
    expect(await listening(3333), "port 3333 is in use: stop what listens there, then rerun").toBe(false);
    const run = shell(line, {
      PATH: process.env.PATH ?? "",
      HOME: iso.dir,
      GENERATION_STORE: iso.env.GENERATION_STORE ?? "",
    });
    try {
      await expect
        .poll(run.out, { timeout: 20_000 })
        .toContain(`Streamable HTTP, listening on 127.0.0.1:3333 for ${url}/mcp`);
      expect(run.out()).toContain("auth: oauth");
      const metadata = await fetch(`${url}/.well-known/oauth-authorization-server`);
      expect(metadata.status).toBe(200);
      expect(((await metadata.json()) as { issuer?: string }).issuer).toBe(url);
      const resource = await fetch(`${url}/.well-known/oauth-protected-resource/mcp`);
      expect(((await resource.json()) as { resource?: string }).resource).toBe(`${url}/mcp`);
      const challenge = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(challenge.status).toBe(401);
      expect(challenge.headers.get("www-authenticate")).toContain(
        `resource_metadata="${url}/.well-known/oauth-protected-resource/mcp"`,
      );
    } finally {
      await stopGroup(run.child);
    }
  }, 40_000);

  it("names every missing OAuth setting in one run, one line each", async () => {
    const r = await runCli(["--sandbox"], { ...iso.env, GENERATION_AUTH: "oauth" });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(/^generation-mcp: --auth: 'oauth' needs --transport http/),
      expect.stringMatching(/^generation-mcp: GENERATION_PUBLIC_URL: required with --auth oauth/),
      expect.stringMatching(/^generation-mcp: GENERATION_AUTH_SECRET: required with --auth oauth/),
    ]);
  });
});

describe("numeric settings out of range", () => {
  it.each([
    ["GENERATION_MAX_GEMS", "-5", "-5 is below 0; expected an integer from 0 to 1000000000"],
    ["GENERATION_CONFIRM_ABOVE_GEMS", "12.5", "12.5 is not a whole number; expected an integer"],
    ["GENERATION_WAIT_SECONDS", "700", "700 is above 600; expected seconds from 0 to 600"],
  ])("%s=%s is shown, as every plain number is", async (name, value, message) => {
    const r = await runCli(["--sandbox"], { ...iso.env, [name]: value });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`generation-mcp: ${name}: ${message}`);
  });
});

describe("mcp.json.example: the HTTP entry against npm start", () => {
  it("connects, and tools work under the sandbox's key", async () => {
    const entries = (
      JSON.parse(readFileSync(join(ROOT, "mcp.json.example"), "utf8")) as {
        mcpServers: Record<string, { type?: string; url?: string; headers?: Record<string, string> }>;
      }
    ).mcpServers;
    const entry = Object.values(entries).find((e) => e.type === "http");
    expect(entry?.url).toBe("http://127.0.0.1:3333/mcp");
    // npm start is this command (package.json); any free port here instead of 3333.
    const start = (
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } }
    ).scripts.start;
    expect(start).toBe("node dist/cli.js --sandbox --transport http");
    const server = await startHttpCli(["--sandbox"], iso.env);
    const client = new Client({ name: "mcp-json-example", version: "1.0.0" });
    try {
      const url = new URL(entry?.url ?? "");
      url.port = new URL(server.url).port;
      await client.connect(
        new StreamableHTTPClientTransport(url, { requestInit: { headers: entry?.headers ?? {} } }),
      );
      const models = await client.callTool({ name: "list_models", arguments: {} });
      expect(models.isError, JSON.stringify(models.content)).toBeFalsy();
      const made = await client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt: "a first image", wait: 0 },
      });
      expect(made.isError, JSON.stringify(made.content)).toBeFalsy();
    } finally {
      await client.close();
      await server.stop();
    }
  }, 30_000);
});
