/**
 * The package as users get it: `npm pack`, installed from the tarball into an empty folder with an
 * empty npm cache, its binary started over stdio with `--sandbox` by a real MCP client, which lists
 * the tools and makes one paid call. Used by CI (`tsx scripts/packaged.ts`, a check; with the
 * argument `node 24` it only prints the cached Node 24's path) and by `npm run bench:install`.
 *
 * Node 22, 24 and 26 and npm 10, 11 and 12 come from the npm registry's own packages (`node`,
 * `npm`), installed once into .tmp/tools and reused (.ci/run bootstraps its Node 22 there too):
 * that is where users are, whatever Node runs the test suite.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const TOOLS = join(ROOT, ".tmp", "tools");

/** A Node binary and an npm CLI to run with it. */
export interface Toolchain {
  label: string;
  node: string;
  npmCli: string;
  /** Extra `npm install` arguments. */
  args?: string[];
}

/** Installs `spec` (e.g. `node@24`) into .tmp/tools/<name> once, with the npm running this script. */
function cachedInstall(name: string, spec: string): string {
  const dir = join(TOOLS, name);
  if (!existsSync(join(dir, "node_modules"))) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), "{}\n");
    // The `node` package installs its binary from a preinstall script: allow scripts here.
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-save", spec], {
      cwd: dir,
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  return dir;
}

/** Node `major` from the registry's `node` package. */
export function nodeOf(major: number): string {
  const bin = join(cachedInstall(`node${major}`, `node@${major}`), "node_modules", "node", "bin", "node");
  if (!existsSync(bin)) throw new Error(`node@${major} installed no binary at ${bin}`);
  return bin;
}

/** npm `major` from the registry, run by `node`. */
export function npmOf(major: number, node: string): Toolchain {
  const cli = join(cachedInstall(`npm${major}`, `npm@${major}`), "node_modules", "npm", "bin", "npm-cli.js");
  return { label: `npm ${major}`, node, npmCli: cli };
}

/** Builds and packs the project; returns the tarball's path. */
export function pack(outDir: string): string {
  mkdirSync(outDir, { recursive: true });
  execFileSync(process.execPath, [join(ROOT, "scripts", "bundle.mjs")], { cwd: ROOT, stdio: "inherit" });
  const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", outDir], {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const [info] = JSON.parse(out) as Array<{ filename: string }>;
  if (info === undefined) throw new Error("npm pack reported no tarball");
  return join(outDir, info.filename);
}

export interface Installed {
  dir: string;
  bin: string;
  installMs: number;
}

/** `npm install <tarball>` into a new empty folder with a new empty cache, as a first-time user. */
export function install(tc: Toolchain, tarball: string, parent: string): Installed {
  const dir = mkdtempSync(join(parent, "install-"));
  writeFileSync(join(dir, "package.json"), '{ "name": "fresh-user", "private": true }\n');
  const began = performance.now();
  const r = spawnSync(
    tc.node,
    [
      tc.npmCli,
      "install",
      "--no-audit",
      "--no-fund",
      "--cache",
      join(dir, ".npm-cache"),
      ...(tc.args ?? []),
      tarball,
    ],
    { cwd: dir, encoding: "utf8", env: withNodeFirst(tc.node), timeout: 600_000 },
  );
  const installMs = performance.now() - began;
  if (r.status !== 0) throw new Error(`${tc.label} install failed (${r.status}): ${r.stderr}`);
  const bin = join(dir, "node_modules", ".bin", "generation-mcp");
  if (!existsSync(bin)) throw new Error(`${tc.label} installed no generation-mcp binary`);
  return { dir, bin, installMs };
}

/** PATH with `node`'s folder first, so `#!/usr/bin/env node` finds that Node. */
function withNodeFirst(node: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("npm_")) env[k] = v;
  env.PATH = `${dirname(node)}${delimiter}${env.PATH ?? ""}`;
  return env;
}

export interface Session {
  toolsListMs: number;
  tools: number;
  paid: { text: string; identity: string; taskId: string };
  stderr: string;
}

interface Called {
  toolsListMs: number;
  tools: number;
  isError: boolean;
  text: string;
  structured: { idempotencyKey?: string; task?: { id?: string } } | undefined;
  stderr: string;
}

/** Starts the installed binary on `node` with --sandbox, lists tools, calls generate_image once. */
async function listAndGenerate(node: string, installed: Installed): Promise<Called> {
  const home = mkdtempSync(join(installed.dir, "home-"));
  const env = {
    ...withNodeFirst(node),
    HOME: home,
    GENERATION_STORE: `sqlite://${join(home, "ledger.sqlite")}`,
    GENERATION_FILES: home,
  };
  const began = performance.now();
  const transport = new StdioClientTransport({
    command: installed.bin,
    args: ["--sandbox"],
    env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const client = new Client({ name: "packaged-install-check", version: "1.0.0" });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    const toolsListMs = performance.now() - began;
    const result = await client.callTool({
      name: "generate_image",
      arguments: { model: "sandbox-image-fast", prompt: "a lighthouse at dusk", wait: 30 },
    });
    // The ledger opens in the background a second after start; its stderr line comes then.
    await new Promise((r) => setTimeout(r, 1500));
    return {
      toolsListMs,
      tools: tools.length,
      isError: result.isError === true,
      text: (result.content as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n"),
      structured: result.structuredContent as Called["structured"],
      stderr,
    };
  } finally {
    await client.close().catch(() => {});
  }
}

/** The first paid call must succeed. */
export async function startAndPay(node: string, installed: Installed): Promise<Session> {
  const c = await listAndGenerate(node, installed);
  const identity = c.structured?.idempotencyKey;
  const taskId = c.structured?.task?.id;
  if (c.isError || identity === undefined || taskId === undefined) {
    throw new Error(`the paid call failed: ${c.text}\nstderr: ${c.stderr}`);
  }
  return {
    toolsListMs: c.toolsListMs,
    tools: c.tools,
    paid: { text: c.text, identity, taskId },
    stderr: c.stderr,
  };
}

/**
 * On a Node older than the floor (npm only warns about `engines`, so the install works), the
 * server still starts: stderr says once that the ledger cannot open and why, and the paid call is
 * refused with the fix (upgrade Node), never "report it". Returns the result's text.
 */
export async function expectOldNodeFix(node: string, installed: Installed): Promise<string> {
  const c = await listAndGenerate(node, installed);
  const problems: string[] = [];
  if (!c.isError || !c.text.startsWith("LEDGER_NO_SQLITE: "))
    problems.push("the paid call was not LEDGER_NO_SQLITE");
  if (!/Upgrade Node\.js to 22\.13 or newer/.test(c.text) || /sqlite3/.test(c.text))
    problems.push("no fix in the result");
  if (/report it/.test(c.text)) problems.push("the result says 'report it'");
  const lines = c.stderr.trimEnd().split("\n");
  if (lines.length !== 1 || !/has no node:sqlite.*To fix: Upgrade Node/.test(lines[0] ?? ""))
    problems.push("not one stderr line with the fix");
  if (problems.length > 0) throw new Error(`${problems.join("; ")}\nresult: ${c.text}\nstderr: ${c.stderr}`);
  return c.text;
}

/** Bytes under `path`, as `du` counts apparent sizes. */
export function sizeOf(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const entry of readdirSync(path)) total += sizeOf(join(path, entry));
  return total;
}

function hasNodeSqlite(node: string): boolean {
  return spawnSync(node, ["-e", "require('node:sqlite')"], { stdio: "ignore" }).status === 0;
}

export const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(2)} MB`;

/** Each supported Node with the npm it ships, and npm 12 (the newest) on Node 24. */
const MATRIX: Array<[node: number, npm: number]> = [
  [22, 10],
  [24, 11],
  [26, 11],
  [24, 12],
];

/** The first Node on PATH, when it is older than the floor (CI's machine has Debian's Node 20). */
function oldNodeOnPath(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const node = join(dir, "node");
    if (existsSync(node) && !hasNodeSqlite(node)) return node;
  }
  return undefined;
}

/** CI's check: from the tarball to a paid call on every supported Node. Exits non-zero on failure. */
async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "generation-mcp-packaged-"));
  try {
    const tarball = pack(work);
    console.error(`tarball: ${mb(sizeOf(tarball))}`);
    let last: Installed | undefined;
    for (const [major, npm] of MATRIX) {
      const node = nodeOf(major);
      const installed = install(npmOf(npm, node), tarball, work);
      const s = await startAndPay(node, installed);
      // node:sqlite's ExperimentalWarning (Node 22) must not reach stderr; nor any other warning.
      if (/Warning|ledger/i.test(s.stderr)) throw new Error(`stderr on Node ${major}: ${s.stderr}`);
      console.error(
        `packed install, npm ${npm} on Node ${major}: ${mb(sizeOf(join(installed.dir, "node_modules")))} installed ` +
          `in ${(installed.installMs / 1000).toFixed(1)} s, ${s.tools} tools in ${(s.toolsListMs / 1000).toFixed(1)} s, ` +
          `generate_image ok (task ${s.paid.taskId}), nothing on stderr`,
      );
      last = installed;
    }
    const old = oldNodeOnPath();
    if (old !== undefined && last !== undefined) {
      await expectOldNodeFix(old, last);
      const version = spawnSync(old, ["--version"], { encoding: "utf8" }).stdout.trim();
      console.error(`the same install on ${version} (${old}): the paid call says to upgrade Node, once`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // `tsx scripts/packaged.ts node 24` only installs (once) and prints that Node's path.
  if (process.argv[2] === "node") process.stdout.write(`${nodeOf(Number(process.argv[3]))}\n`);
  else await main();
}
