/**
 * The layout docs/architecture.md#layout describes, held: each folder of src/ imports only the
 * folders below it (cli → transports → surface → tools → calls → mcp → ledger → client → shared → config), src/calls/
 * splits into rooms by feature with arrows of their own, and no module imports, directly or
 * through others, itself. Imports are read from the source text, type-only and lazy ones included.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
const SRC = join(ROOT, "src");

/** What each folder (or top-level module) of src/ may import besides itself. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  config: [],
  // What every room uses: the error base, local refusals, wording, scrubbing, the polling schedule.
  shared: ["config"],
  client: ["shared", "config"],
  ledger: ["client", "shared", "config"],
  sandbox: ["client", "shared", "config"],
  mcp: ["ledger", "client", "shared", "config"],
  // The calls, one room per feature; within calls/, the arrows of CALLS_MAY_IMPORT.
  calls: ["mcp", "ledger", "client", "shared", "config"],
  tools: ["calls", "mcp", "ledger", "client", "shared", "config"],
  // The view's browser code shares the polling schedule; html.ts reads the built page, imports nothing.
  viewer: ["client", "shared"],
  // The MCP surface: assembly, prompts, resources, completions, the viewer's resource and app-only tools.
  surface: ["tools", "calls", "mcp", "ledger", "client", "viewer", "shared", "config"],
  // stdio, HTTP and OAuth: where a request arrives, its key or token is checked and its engine resolved.
  transports: ["surface", "calls", "mcp", "ledger", "client", "sandbox", "shared", "config"],
  cli: ["config", "transports", "surface", "sandbox", "ledger", "client", "mcp", "shared"],
};

/**
 * The rooms of src/calls/ by feature, and which of them each may import: the paid call checks the
 * catalog, saves files and hands a task back to the MCP task's room, which runs the steps it is
 * given and knows no call kind (a task taken over gets its steps from the paid call's table,
 * src/calls/paid/resumable.ts, passed in by the surface); the device uploads judge files.
 */
const CALLS_MAY_IMPORT: Record<string, readonly string[]> = {
  catalog: [],
  files: [],
  uploads: ["files"],
  "mcp-task": [],
  paid: ["mcp-task", "catalog", "files"],
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** `src/tools/chat.ts` → `tools`; `src/cli.ts` → `cli`; outside src → its top folder. */
function roomOf(file: string): string {
  const rel = relative(ROOT, file).split("/");
  if (rel[0] !== "src") return rel[0] ?? "";
  return rel.length > 2 ? (rel[1] ?? "") : (rel[1] ?? "").replace(/\.ts$/, "");
}

/** `src/calls/paid/media-call.ts` → `paid`. */
function callsRoomOf(file: string): string {
  return relative(join(SRC, "calls"), file).split("/")[0] ?? "";
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)].map((m) =>
    resolve(dirname(file), m[1] ?? "").replace(/\.js$/, ".ts"),
  );
}

const FILES = sources(SRC);
const GRAPH = new Map(FILES.map((f) => [f, importsOf(f)]));

describe("the source layout", () => {
  it("imports run one way: each folder only into the folders below it", () => {
    const wrong: string[] = [];
    for (const [file, targets] of GRAPH) {
      const from = roomOf(file);
      for (const target of targets) {
        const to = roomOf(target);
        if (to !== from && !(MAY_IMPORT[from] ?? []).includes(to)) {
          wrong.push(`${relative(ROOT, file)} imports ${relative(ROOT, target)} (${from} → ${to})`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("splits src/calls/ into rooms by feature, whose imports run one way", () => {
    const wrong: string[] = [];
    for (const [file, targets] of GRAPH) {
      if (roomOf(file) !== "calls") continue;
      const from = callsRoomOf(file);
      if (!(from in CALLS_MAY_IMPORT)) wrong.push(`${relative(ROOT, file)} is in no room of calls/`);
      for (const target of targets) {
        if (roomOf(target) !== "calls") continue;
        const to = callsRoomOf(target);
        if (to !== from && !(CALLS_MAY_IMPORT[from] ?? []).includes(to)) {
          wrong.push(`${relative(ROOT, file)} imports ${relative(ROOT, target)} (${from} → ${to})`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("holds at most 24 files directly in any folder (the generated catalog aside)", () => {
    const crowded: string[] = [];
    const visit = (dir: string): void => {
      const entries = readdirSync(dir, { withFileTypes: true });
      const files = entries.filter((e) => e.isFile() && e.name !== "catalog.ts");
      if (files.length > 24) crowded.push(`${relative(ROOT, dir)}: ${files.length}`);
      for (const e of entries) if (e.isDirectory()) visit(join(dir, e.name));
    };
    visit(SRC);
    expect(crowded).toEqual([]);
  });

  it("names the MCP task's code mcp-task-*.ts, so a bare task is the service's", () => {
    const misnamed = FILES.filter((f) => {
      const name = f.split("/").pop() ?? "";
      const inRoom = f.includes("/calls/mcp-task/");
      return (
        inRoom !== name.startsWith("mcp-task-") && !(name.startsWith("mcp-task-wire") && f.includes("/mcp/"))
      );
    });
    expect(misnamed.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it("has no circle of imports", () => {
    const state = new Map<string, "open" | "done">();
    const circles: string[] = [];
    const visit = (file: string, path: string[]): void => {
      state.set(file, "open");
      for (const next of GRAPH.get(file) ?? []) {
        if (!GRAPH.has(next)) continue;
        if (state.get(next) === "open") {
          circles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(ROOT, f)).join(" → "));
        } else if (state.get(next) === undefined) visit(next, [...path, next]);
      }
      state.set(file, "done");
    };
    for (const file of FILES) if (state.get(file) === undefined) visit(file, [file]);
    expect(circles).toEqual([]);
  });

  it("names every file once in src/, and every test file once in test/", () => {
    const twice = (files: string[]): string[] => {
      const seen = new Map<string, string[]>();
      for (const f of files) {
        const name = f.split("/").pop() ?? f;
        seen.set(name, [...(seen.get(name) ?? []), relative(ROOT, f)]);
      }
      return [...seen.values()].filter((paths) => paths.length > 1).map((paths) => paths.join(" = "));
    };
    const all = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? (e.name === "fixtures" ? [] : all(join(dir, e.name))) : [join(dir, e.name)],
      );
    expect(twice(all(SRC).filter((f) => /\.(ts|mts|mjs)$/.test(f)))).toEqual([]);
    expect(twice(all(join(ROOT, "test")).filter((f) => f.endsWith(".test.ts")))).toEqual([]);
  });
});
