/**
 * The MCP Inspector's web UI as a user runs it (`npx @modelcontextprotocol/inspector …`), for the
 * browser test of the viewer in a real host (test/viewer/inspector.test.ts). It runs on the Node
 * that runs vitest (22 or newer, as the project requires); the package is installed once into .tmp/inspector with that Node's npm, pinned, without
 * install scripts (it needs none: its postinstall only serves its own source checkout).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, dirname, join } from "node:path";
import type { Page } from "playwright-core";
import { chromiumMissing } from "./chromium.js";
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

/** The pinned Inspector under .tmp/inspector and the Node to run it: installed on first use. */
export function inspectorInstall(): InspectorInstall {
  const node = process.execPath;
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
        // npm itself runs on this Node, first on PATH, as a user's would.
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
      // The Inspector's stdio servers are started with `node` from PATH: this Node as well.
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

/** The pinned Inspector, installed if need be, or what keeps its tests from running here. */
export function inspectorOrMissing(): InspectorInstall | string {
  const missing = chromiumMissing();
  if (missing !== undefined) return missing;
  try {
    return inspectorInstall();
  } catch (error) {
    return `the MCP Inspector could not be installed into .tmp/inspector: ${(error as Error).message.split("\n")[0]}`;
  }
}

/**
 * Opens the Inspector's page and connects to the one server listed, as a user does: the switch on
 * its card; with `key`, signing in on the server's own page (`--auth oauth`) with that service key.
 * Screenshots of a failed attempt go to `shots`.
 */
export async function connectInspector(
  page: Page,
  url: string,
  o: { shots: string; key?: string },
): Promise<void> {
  // The UI links Google Fonts; the machine may be offline, and the test needs no fonts from there.
  await page.route(/fonts\.(googleapis|gstatic)\.com/, (r) => r.abort());
  await page.goto(url);
  // The server's card says Disconnected once the UI has rendered (and its handlers are attached).
  await page.getByText("Disconnected", { exact: true }).waitFor({ timeout: 20_000 });
  // Mantine's switch hides its input under a styled track: the click goes to the input itself.
  const toggle = page.getByRole("switch", { name: /Connect or disconnect/ });
  const connected = page.getByText("Connected", { exact: true });
  for (let attempt = 1; ; attempt++) {
    if (!(await toggle.isChecked())) await toggle.click({ force: true });
    try {
      if (o.key !== undefined) {
        // The Inspector registers, then sends the browser to the server's sign-in page.
        await page.locator("#key").waitFor({ timeout: 20_000 });
        await page.fill("#key", o.key);
        await page.click('button[value="allow"]');
      }
      await connected.waitFor({ timeout: o.key === undefined ? 10_000 : 20_000 });
      return;
    } catch (error) {
      // Seen once on a loaded machine: the first click had no effect. Once more, with evidence.
      await page.screenshot({ path: join(o.shots, `inspector-connect-attempt-${attempt}.png`) });
      if (attempt === 2 || o.key !== undefined) throw error;
      if (await toggle.isChecked()) await toggle.click({ force: true });
    }
  }
}
