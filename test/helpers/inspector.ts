/**
 * The MCP Inspector's web UI as a user runs it (`npx @modelcontextprotocol/inspector …`), for the
 * browser test of the viewer in a real host (test/viewer/inspector.test.ts). It needs Node 22+, so
 * it runs on the Node 24 binary that scripts/packaged.ts caches in .tmp/tools, whatever Node runs
 * vitest; the package is installed once into .tmp/inspector with that Node's npm, pinned, without
 * install scripts (it needs none: its postinstall only serves its own source checkout).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, dirname, join } from "node:path";
import { node24 } from "../../scripts/packaged.js";
import { ROOT } from "./cli.js";

export const INSPECTOR_VERSION = "2.12.0";
const DIR = join(ROOT, ".tmp", "inspector");
const PKG = join(DIR, "node_modules", "@modelcontextprotocol", "inspector");
const LAUNCHER = join(PKG, "clients", "launcher", "build", "index.js");

export interface InspectorInstall {
  node: string;
  launcher: string;
}

function installedVersion(): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(PKG, "package.json"), "utf8")) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** The pinned Inspector under .tmp/inspector and a Node 24 to run it: installed on first use. */
export function inspectorInstall(): InspectorInstall {
  const node = node24();
  if (installedVersion() !== INSPECTOR_VERSION || !existsSync(LAUNCHER)) {
    mkdirSync(DIR, { recursive: true });
    writeFileSync(join(DIR, "package.json"), '{ "private": true }\n');
    execFileSync(
      "npm",
      [
        "install",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--save-exact",
        `@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`,
      ],
      {
        cwd: DIR,
        // npm itself runs on the Node 24 first on PATH, as a user's Node 22+ would.
        env: { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}` },
        stdio: ["ignore", "ignore", "pipe"],
        timeout: 180_000,
      },
    );
    if (installedVersion() !== INSPECTOR_VERSION)
      throw new Error(`npm installed no @modelcontextprotocol/inspector@${INSPECTOR_VERSION} in ${DIR}`);
  }
  return { node, launcher: LAUNCHER };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

export interface RunningInspector {
  /** The URL the Inspector prints for the user to open, with its session token. */
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts the web UI with `args` as a user passes them after `npx @modelcontextprotocol/inspector`,
 * on free loopback ports, with a private HOME, and waits for the URL it prints.
 */
export async function startInspector(
  install: InspectorInstall,
  args: string[],
  env: Record<string, string>,
): Promise<RunningInspector> {
  const port = await freePort();
  const child: ChildProcess = spawn(install.node, [install.launcher, ...args], {
    env: {
      ...env,
      // The Inspector's stdio servers are started with `node` from PATH: Node 24 here as well.
      PATH: `${dirname(install.node)}${delimiter}${env.PATH ?? process.env.PATH ?? ""}`,
      CLIENT_PORT: String(port),
      MCP_SANDBOX_PORT: "0",
      MCP_APP_ORIGIN_PORT: "0",
      MCP_AUTO_OPEN_ENABLED: "false",
      MCP_INSPECTOR_SECRET_STORE: "memory",
    },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, so stop() ends the stdio servers it started too.
    detached: true,
  });
  let output = "";
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
      child.once("exit", () => resolve());
      process.kill(-child.pid, "SIGTERM");
      setTimeout(() => {
        if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      }, 3_000).unref();
    });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the Inspector printed no URL within 30 s:\n${output}`));
    }, 30_000);
    const onData = (c: Buffer) => {
      output += c.toString();
      const match = new RegExp(`http://127\\.0\\.0\\.1:${port}\\S*`).exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[0]);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the Inspector exited (${code}) before serving:\n${output}`));
    });
  });
  return { url, output: () => output, stop };
}
