/**
 * What the README and docs/ point at exists: every relative link reaches a file (and a heading,
 * when it names one), every `src/…`, `test/…`, `bench/…` or `scripts/…` path they name is a file
 * of the repo, and every comment in the code that cites docs/….md#section cites a section there.
 * Docs that drift from the code fail here instead of misleading a reader.
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

  it("would notice a link to a heading that is gone", () => {
    expect(anchors("docs/idempotency.md").has("rules")).toBe(true);
    expect(anchors("docs/idempotency.md").has("no-such-heading")).toBe(false);
    expect(slug("Polling: results seen sooner")).toBe("polling-results-seen-sooner");
  });
});
