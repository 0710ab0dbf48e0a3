/**
 * What the README and docs/ point at exists: every relative link reaches a file (and a heading,
 * when it names one), every `src/…`, `test/…`, `bench/…` or `scripts/…` path they name is a file
 * of the repo, every comment in the code that cites docs/….md#section cites a section there, and
 * every file a comment in the code names is a file of the repo. Docs and comments that drift from
 * the code fail here instead of misleading a reader.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

const DOCS = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith(".md"),
);

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchors(file: string): Set<string> {
  const text = readFileSync(join(ROOT, file), "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1] ?? "")));
}

/** A link target relative to the repo root, with its anchor. */
function resolveLink(from: string, target: string): { file: string; anchor: string | undefined } {
  const [path = "", anchor] = target.split("#");
  const file = path === "" ? from : relative(ROOT, join(ROOT, dirname(from), path));
  return { file, anchor };
}

function filesUnder(dir: string): string[] {
  return (
    readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && /\.(ts|mjs|js)$/.test(e.name))
      .map((e) => relative(ROOT, join(e.parentPath, e.name)))
      // Installed packages (bench/peers/node_modules, after `npm run bench`) are not ours to cite docs/.
      .filter((f) => !f.split("/").includes("node_modules"))
  );
}

/** Every file of the repo, relative to it: not installed packages, build output or git's own. */
function repoFiles(dir = ""): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = dir === "" ? e.name : `${dir}/${e.name}`;
    if (e.isDirectory()) return SKIPPED.has(e.name) ? [] : repoFiles(path);
    return e.isFile() ? [path] : [];
  });
}
const SKIPPED = new Set(["node_modules", ".git", "dist", "coverage", ".tmp"]);

/** The comments of a source file: block comments, and line comments not inside a URL. */
function comments(text: string): string[] {
  return [...text.matchAll(/\/\*[\s\S]*?\*\/|(?<![:"'`\w])\/\/.*$/gm)].map((m) => m[0]);
}

/**
 * The files a comment names: a word ending in .ts, .mjs, .js, .md or .json, bare (`record.ts`) or
 * with folders (`src/ledger/record.ts`, `oauth/oauth-gate.ts`). Not checked, by the shape of the
 * match: a name inside a URL or a package path (preceded by `/`, `:`, `@`, `.` or a word
 * character: `https://github.com/…/oauth.ts`, `node:sqlite`, `@scope/pkg/x.js`), a name that goes
 * on (`mcp.json.example`), a declaration file (`.d.ts`) and build output (`dist/cli.js`). Another
 * repository's file is therefore cited by its URL.
 */
const CITED = /(?<![\w./@:-])((?:[\w.-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|mjs|js|md|json))(?![\w/-]|\.\w)/g;

/** A citation holds when some file's path ends with it, whole folder and file names only. */
function cites(files: string[], name: string): boolean {
  return (
    name.endsWith(".d.ts") || name.startsWith("dist/") || files.some((f) => `/${f}`.endsWith(`/${name}`))
  );
}

describe("the README and docs/", () => {
  it("link only to files and headings that exist", () => {
    const broken: string[] = [];
    for (const doc of DOCS) {
      const text = readFileSync(join(ROOT, doc), "utf8");
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] ?? "";
        if (/^[a-z]+:/.test(target)) continue;
        const { file, anchor } = resolveLink(doc, target);
        if (!existsSync(join(ROOT, file))) broken.push(`${doc}: ${target} (no such file)`);
        else if (anchor !== undefined && file.endsWith(".md") && !anchors(file).has(anchor))
          broken.push(`${doc}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("name only source, test and script files that exist", () => {
    const missing: string[] = [];
    for (const doc of DOCS) {
      const text = readFileSync(join(ROOT, doc), "utf8");
      // In code spans, and as the participants of a diagram (`participant P as src/calls/…`).
      const path = /(?:`|participant \w+ as )((?:src|test|bench|scripts)\/[\w./-]+\.(?:ts|mjs|js|json))\b/g;
      for (const m of text.matchAll(path)) {
        if (!existsSync(join(ROOT, m[1] ?? ""))) missing.push(`${doc}: ${m[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("hold every section that a comment in the code cites", () => {
    const broken: string[] = [];
    for (const file of ["src", "test", "bench", "scripts"].flatMap(filesUnder)) {
      const text = readFileSync(join(ROOT, file), "utf8");
      for (const m of text.matchAll(/\bdocs\/([\w-]+\.md)(?:#([\w-]+))?/g)) {
        const doc = `docs/${m[1]}`;
        if (!existsSync(join(ROOT, doc))) broken.push(`${file}: ${doc} (no such file)`);
        else if (m[2] !== undefined && !anchors(doc).has(m[2])) broken.push(`${file}: ${doc}#${m[2]}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("hold every file that a comment in the code names", () => {
    const files = repoFiles();
    const missing: string[] = [];
    for (const file of ["src", "test", "bench", "scripts"].flatMap(filesUnder)) {
      for (const comment of comments(readFileSync(join(ROOT, file), "utf8"))) {
        for (const m of comment.matchAll(CITED)) {
          if (!cites(files, m[1] ?? "")) missing.push(`${file}: ${m[1]}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("would notice a comment naming a file that is gone, and skip what is not a citation", () => {
    const named = (comment: string) => [...comment.matchAll(CITED)].map((m) => m[1]);
    expect(named("// see keyed.ts and src/ledger/keyed-store.ts (oauth/oauth-gate.ts)")).toEqual([
      "keyed.ts",
      "src/ledger/keyed-store.ts",
      "oauth/oauth-gate.ts",
    ]);
    expect(named("// https://github.com/o/r/blob/main/src/x.ts, @scope/pkg/y.js, mcp.json.example")).toEqual(
      [],
    );
    expect(named("// oidc-provider, node:sqlite, define-tool")).toEqual([]);
    const files = repoFiles();
    expect(cites(files, "keyed.ts")).toBe(false);
    expect(cites(files, "tool.ts")).toBe(false);
    expect(cites(files, "oauth/oauth-gate.ts")).toBe(true);
    expect(cites(files, "record.ts")).toBe(true);
    expect(cites(files, "src/record.ts")).toBe(false);
    expect(cites(files, "types.d.ts")).toBe(true);
  });

  it("would notice a link to a heading that is gone", () => {
    expect(anchors("docs/idempotency.md").has("rules")).toBe(true);
    expect(anchors("docs/idempotency.md").has("no-such-heading")).toBe(false);
    expect(slug("Polling: results seen sooner")).toBe("polling-results-seen-sooner");
  });
});
