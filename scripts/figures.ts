/**
 * The sizes the README and the docs quote, measured, never typed: the package as `npm pack` makes
 * it, and `tools/list` and the media viewer's page as the built CLI serves them. Each sits in its
 * text between markers, `<!-- figure:NAME -->977 kB<!-- /figure -->`, invisible when rendered.
 *   npm run figures             measure (on the current dist/: run `npm run build` first) and rewrite
 *   test/e2e/figures.test.ts    fails while a written figure differs from what this measures
 * The README is in the package, so its own figure moves the size it states: writing repeats until
 * the figures stand still. Timings (docs/benchmarks.md) come from one run of `npm run bench*` and
 * stay as measured then.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The texts that quote figures, from the repository's root. */
export const FIGURE_FILES = ["README.md", "docs/benchmarks.md", "docs/architecture.md", "docs/viewer.md"];

/** How a client declares MCP Apps (ext-apps' EXTENSION_ID, RESOURCE_MIME_TYPE). */
const APPS = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };
const VIEWER_URI = "ui://generation/viewer";

const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+$)/g, ",");
const kB = (n: number): string => `${Math.round(n / 1000)} kB`;
const MB = (n: number): string => `${(n / 1e6).toFixed(2)} MB`;

export type Figures = Record<string, string>;

interface Listed {
  tools: Array<{ name: string }>;
  bytes: number;
  viewer?: string;
}

/**
 * One raw stdio session with the built CLI (--sandbox): tools/list as the client receives it, as
 * bytes of JSON, and with MCP Apps declared, the viewer's page as resources/read serves it.
 */
export function listTools(apps: boolean): Promise<Listed> {
  const home = mkdtempSync(join(tmpdir(), "generation-mcp-figures-"));
  const child = spawn(process.execPath, [join(ROOT, "dist", "cli.js"), "--sandbox"], {
    env: { PATH: process.env.PATH ?? "", HOME: home, GENERATION_STORE: `sqlite://${join(home, "l.sqlite")}` },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
  return new Promise<Listed>((done, fail) => {
    const timer = setTimeout(() => child.kill(), 20_000);
    let out = "";
    let listed: Listed | undefined;
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const lines = out.split("\n");
      out = lines.pop() ?? "";
      for (const line of lines) {
        const m = JSON.parse(line) as { id?: number; result?: Record<string, unknown> };
        if (m.id === 2 && m.result) {
          listed = {
            tools: m.result.tools as Listed["tools"],
            bytes: Buffer.byteLength(JSON.stringify(m.result)),
          };
          if (apps) send({ jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: VIEWER_URI } });
        }
        if (m.id === 3 && m.result && listed) {
          listed.viewer = String((m.result.contents as Array<{ text?: string }>)[0]?.text ?? "");
        }
        if (listed && (!apps || listed.viewer !== undefined)) child.stdin.end();
      }
    });
    child.once("error", fail);
    child.once("exit", () => {
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
      if (listed) done(listed);
      else fail(new Error("the built CLI gave no tools/list answer (run npm run build)"));
    });
    const capabilities = apps ? { extensions: APPS } : {};
    const clientInfo = { name: "figures", version: "1" };
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities, clientInfo },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  });
}

/** `npm pack --dry-run`: the tarball's size, unpacked size and file count, as published. */
export function packed(): { size: number; unpackedSize: number; entryCount: number } {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  // npm 10 and 11 answer a list, npm 12 an object by package name.
  const parsed = JSON.parse(out) as unknown;
  const info = (Array.isArray(parsed) ? parsed[0] : Object.values(parsed as object)[0]) as
    | { size: number; unpackedSize: number; entryCount: number }
    | undefined;
  if (info === undefined) throw new Error("npm pack --dry-run reported no package");
  return info;
}

/** Every figure, measured now, by name, as the texts write it. */
export async function measureFigures(): Promise<Figures> {
  const [plain, apps] = await Promise.all([listTools(false), listTools(true)]);
  const sizes = plain.tools
    .map((t) => ({ name: t.name, bytes: Buffer.byteLength(JSON.stringify(t)) }))
    .sort((a, b) => b.bytes - a.bytes);
  const page = apps.viewer ?? "";
  const pack = packed();
  return {
    "tools-list-tools": String(plain.tools.length),
    "tools-list-bytes": grouped(plain.bytes),
    "tools-list-largest": `\`${sizes[0]?.name}\` ${grouped(sizes[0]?.bytes ?? 0)}`,
    "tools-list-apps-tools": String(apps.tools.length),
    "tools-list-apps-bytes": grouped(apps.bytes),
    "viewer-bytes": grouped(Buffer.byteLength(page)),
    "viewer-gzip-bytes": grouped(gzipSync(page).byteLength),
    "package-packed": kB(pack.size),
    "package-unpacked": MB(pack.unpackedSize),
    "package-files": String(pack.entryCount),
  };
}

const MARKER = /<!-- figure:([a-z-]+) -->([^<]*)<!-- \/figure -->/g;

/** `text` with every marked figure set to what `figures` says (unknown names left as they are). */
export function withFigures(text: string, figures: Figures): string {
  return text.replace(MARKER, (whole, name: string) =>
    figures[name] === undefined ? whole : `<!-- figure:${name} -->${figures[name]}<!-- /figure -->`,
  );
}

/** What is wrong with the marked figures of `text`: stale values and unknown names, one line each. */
export function staleFigures(file: string, text: string, figures: Figures): string[] {
  return [...text.matchAll(MARKER)].flatMap(([, name = "", value]) => {
    const fresh = figures[name];
    if (fresh === undefined) return [`${file}: unknown figure ${name}`];
    return fresh === value ? [] : [`${file}: ${name} says ${value}, measured ${fresh}`];
  });
}

/** The names marked in `text`. */
export const markedNames = (text: string): string[] => [...text.matchAll(MARKER)].map((m) => m[1] ?? "");

/** Measures and rewrites until nothing changes (the README's own figure moves the package's size). */
async function main(): Promise<void> {
  for (let round = 1; round <= 3; round++) {
    const figures = await measureFigures();
    let changed = false;
    for (const file of FIGURE_FILES) {
      const path = join(ROOT, file);
      const before = readFileSync(path, "utf8");
      const after = withFigures(before, figures);
      if (after === before) continue;
      writeFileSync(path, after);
      changed = true;
      process.stdout.write(`${file}: figures rewritten\n`);
    }
    if (!changed) {
      process.stdout.write(`figures current: ${JSON.stringify(figures)}\n`);
      return;
    }
  }
  throw new Error("the figures kept changing after three rounds");
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  await main();
