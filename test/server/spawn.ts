/** Helpers for tests and benchmarks that run the built CLI as a host would. */
import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CLI = join(ROOT, "dist", "cli.js");

/** A private HOME, ledger and files directory, so a test never touches the real user's. */
export function isolatedEnv(extra: Record<string, string> = {}): {
  env: Record<string, string>;
  dir: string;
  cleanup(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), "generation-mcp-test-"));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    GENERATION_STORE: `sqlite://${join(dir, "ledger.sqlite")}`,
    GENERATION_FILES: dir,
    ...extra,
  };
  return { env, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion (for --help, --version, refusals). */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 15_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`CLI ${args.join(" ")} did not exit within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Started {
  child: ChildProcess;
  /** The MCP endpoint the server printed. */
  url: string;
  stdout(): string;
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts `--transport http --port 0` and waits for the endpoint line on stdout. */
export function startHttpCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "--transport", "http", "--port", "0", ...args], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let done = false;
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`HTTP CLI did not print its endpoint within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
      const match = /Streamable HTTP at (http:\/\/\S+\/mcp)/.exec(stdout);
      if (match?.[1] !== undefined && !done) {
        done = true;
        clearTimeout(timer);
        resolve({
          child,
          url: match[1],
          stdout: () => stdout,
          stderr: () => stderr,
          stop: () =>
            new Promise<void>((res) => {
              if (child.exitCode !== null) return res();
              child.once("exit", () => res());
              child.kill("SIGTERM");
            }),
        });
      }
    });
    child.on("exit", (code) => {
      if (!done) {
        clearTimeout(timer);
        reject(new Error(`HTTP CLI exited with ${code} before serving; stderr: ${stderr}`));
      }
    });
  });
}

/** The built CLI on stdio with --sandbox, spoken to line by line: already sent initialize and initialized. */
export function rawStdio(env: Record<string, string>): {
  child: ChildProcessWithoutNullStreams;
  send(message: object): void;
  stdout(): string;
} {
  const child = spawn(process.execPath, [CLI, "--sandbox"], { env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return { child, send, stdout: () => out };
}
