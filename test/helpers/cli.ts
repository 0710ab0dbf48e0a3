/** Helpers for tests and benchmarks that run the built CLI as a host would. */
import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { tempDir } from "./temp.js";

/** How a client declares it renders MCP Apps views (ext-apps' EXTENSION_ID and RESOURCE_MIME_TYPE). */
export const APPS_EXTENSION = "io.modelcontextprotocol/ui";
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CLI = join(ROOT, "dist", "cli.js");

/** A private HOME, ledger and files directory, so a test never touches the real user's. */
export function isolatedEnv(extra: Record<string, string> = {}): {
  env: Record<string, string>;
  dir: string;
  cleanup(): void;
} {
  const { dir, cleanup } = tempDir();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    GENERATION_STORE: `sqlite://${join(dir, "ledger.sqlite")}`,
    GENERATION_FILES: dir,
    ...extra,
  };
  return { env, dir, cleanup };
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
      // Key mode prints its endpoint; OAuth mode the address it listens on (and only the public URL).
      const match = /Streamable HTTP at (http:\/\/\S+\/mcp)|listening on (\S+) for /.exec(stdout);
      const url = match?.[1] ?? (match?.[2] === undefined ? undefined : `http://${match[2]}/mcp`);
      if (url !== undefined && !done) {
        done = true;
        clearTimeout(timer);
        resolve({
          child,
          url,
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

/** A 2025-11-25 `initialize` request (id 1), as a raw client sends it. */
export const initializeRequest = (clientName = "raw") => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: clientName, version: "1" },
  },
});

/** The MCP handshake (2025-11-25) as raw JSON-RPC lines: initialize (id 1), then initialized. */
export function handshake(send: (message: object) => void, clientName = "raw"): void {
  send(initializeRequest(clientName));
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
}

export interface RawStdio {
  child: ChildProcessWithoutNullStreams;
  send(message: object): void;
  /** Calls `listener` with each complete stdout line that parses as JSON (other lines are skipped). */
  onMessage(listener: (message: Record<string, unknown>) => void): void;
  stdout(): string;
  stderr(): string;
}

/**
 * A stdio MCP server (by default the built CLI with --sandbox) spoken to line by line, so no client
 * library's start-up is counted: already sent initialize and initialized.
 */
export function rawStdio(
  env: Record<string, string>,
  command: string[] = [CLI, "--sandbox"],
  clientName = "raw",
): RawStdio {
  const child = spawn(process.execPath, command, { env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  let partial = "";
  const listeners: ((message: Record<string, unknown>) => void)[] = [];
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
    const lines = (partial + c.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        continue; // not protocol: stdout purity is checked by its own tests, from stdout()
      }
      if (message !== null && typeof message === "object")
        for (const listener of listeners) listener(message as Record<string, unknown>);
    }
  });
  child.stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
  handshake(send, clientName);
  return {
    child,
    send,
    onMessage: (listener) => listeners.push(listener),
    stdout: () => out,
    stderr: () => err,
  };
}

/** `generation-mcp sandbox --port 0` (the simulated service alone) in its own process. */
export function startSandboxCli(
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "sandbox", "--port", "0"], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`the sandbox did not print its URL within ${timeoutMs} ms`));
    }, timeoutMs);
    const stop = () =>
      new Promise<void>((res) => {
        if (child.exitCode !== null || child.signalCode !== null) return res();
        child.once("exit", () => res());
        child.kill("SIGTERM");
      });
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const match = /GENERATION_BASE_URL=(\S+)/.exec(out);
      if (match?.[1] === undefined) return;
      clearTimeout(timer);
      resolve({ url: match[1], child, stop });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the sandbox exited with ${code} before printing its URL`));
    });
  });
}

export interface ConnectedCli {
  client: Client;
  /** What the server wrote on stderr so far. */
  stderr(): string;
}

/**
 * A real MCP client connected over stdio to the built CLI (or, with `command`, whatever a host's
 * config would start), as a host connects: the way most tests and benchmarks meet the server.
 */
export async function connectCli(o: {
  args: string[];
  env: Record<string, string>;
  command?: string;
  name?: string;
  /** When set, the client declares MCP roots and answers `roots/list` with these directories. */
  roots?: string[];
  /** Declares MCP Apps support (the `io.modelcontextprotocol/ui` extension), as Apps hosts do. */
  apps?: boolean;
}): Promise<ConnectedCli> {
  const transport = new StdioClientTransport({
    command: o.command ?? process.execPath,
    args: o.args,
    env: o.env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const client = new Client(
    { name: o.name ?? "test-host", version: "1.0.0" },
    {
      capabilities: {
        ...(o.roots ? { roots: {} } : {}),
        ...(o.apps ? { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } : {}),
      },
    },
  );
  const roots = o.roots;
  if (roots) {
    client.setRequestHandler("roots/list", async () => ({
      roots: roots.map((dir) => ({ uri: pathToFileURL(dir).href, name: basename(dir) })),
    }));
  }
  await client.connect(transport);
  return { client, stderr: () => stderr };
}
