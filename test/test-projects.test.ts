/**
 * Every test file belongs to exactly one vitest project (vitest.config.ts): a new file outside
 * the patterns would never run, and one matched twice would run twice. The check applies each
 * project's include and exclude globs to the files on disk, as vitest does.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { PROJECT_FILES } from "../vitest.config.js";

const ROOT = path.join(import.meta.dirname, "..");

const testFiles = readdirSync(path.join(ROOT, "test"), { recursive: true, encoding: "utf8" })
  .map((f) => `test/${f.split(path.sep).join("/")}`)
  .filter((f) => f.endsWith(".test.ts"))
  .sort();

const matches = (file: string, globs: readonly string[]) => globs.some((g) => path.matchesGlob(file, g));

it("puts every test file in exactly one project", () => {
  expect(testFiles.length).toBeGreaterThan(100);
  const owners = testFiles.map((file) => {
    const names = Object.entries(PROJECT_FILES)
      .filter(([, p]) => matches(file, p.include) && !matches(file, p.exclude))
      .map(([name]) => name);
    return `${file}: ${names.join(", ") || "none"}`;
  });
  expect(owners.filter((line) => !/: (unit|e2e|browser)$/.test(line))).toEqual([]);
});

it("names only files that exist among the e2e project's single files", () => {
  const singles = PROJECT_FILES.e2e.include.filter((g) => !g.includes("*"));
  expect(singles.filter((f) => !testFiles.includes(f))).toEqual([]);
});
