/**
 * No size in the README or the docs is typed by hand: each sits between figure markers, and
 * measuring them afresh (scripts/figures.ts: `npm pack --dry-run`, and tools/list and the viewer's
 * page from the built CLI over stdio) gives exactly what is written. A change that moves a size
 * fails here until `npm run figures` rewrites them.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  FIGURE_FILES,
  type Figures,
  markedNames,
  measureFigures,
  ROOT,
  staleFigures,
  withFigures,
} from "../../scripts/figures.js";

let figures: Figures;
beforeAll(async () => {
  figures = await measureFigures();
}, 60_000);

const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

describe("the figures the README and docs quote", () => {
  it("are what npm pack and the built CLI measure now (npm run figures rewrites them)", () => {
    const stale = FIGURE_FILES.flatMap((file) => staleFigures(file, read(file), figures));
    expect(stale, `stale figures; run \`npm run build && npm run figures\`:\n${stale.join("\n")}`).toEqual(
      [],
    );
  });

  it("cover every measured figure, and the README's package size", () => {
    const marked = new Set(FIGURE_FILES.flatMap((file) => markedNames(read(file))));
    expect([...marked].sort()).toEqual(Object.keys(figures).sort());
    expect(markedNames(read("README.md"))).toContain("package-packed");
  });

  it("leave no unmarked size of the package, the page or tools/list behind", () => {
    // The phrases that quoted these sizes by hand before; a new one should use a marker too.
    const bare = FIGURE_FILES.flatMap((file) =>
      read(file)
        .replace(/<!-- figure:[a-z-]+ -->[^<]*<!-- \/figure -->/g, "")
        .split("\n")
        .filter((line) => /package is about|Tarball \d|tools\/list` is \d|\(\d[\d,]* bytes, about/.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(bare).toEqual([]);
  });

  it("are rewritten in place, marker by marker", () => {
    const text = "a <!-- figure:viewer-bytes -->1<!-- /figure --> b <!-- figure:nope -->2<!-- /figure -->";
    expect(withFigures(text, { "viewer-bytes": "18,036" })).toBe(
      "a <!-- figure:viewer-bytes -->18,036<!-- /figure --> b <!-- figure:nope -->2<!-- /figure -->",
    );
    expect(staleFigures("t.md", text, { "viewer-bytes": "18,036" })).toEqual([
      "t.md: viewer-bytes says 1, measured 18,036",
      "t.md: unknown figure nope",
    ]);
  });
});
