/**
 * The start path, held: the modules the built CLI loads before its first answer to `tools/list`
 * (over stdio, as hosts start it), against the checked-in list test/e2e/start-path.json. A change
 * that pulls the call path, the ledger's drivers or a heavy package into the start fails here
 * instead of slowing every host's cold start unseen (docs/benchmarks.md gives what a cold start
 * costs). Each chunk of the bundle names the sources it holds (`// src/…` comments, scripts/bundle.mjs
 * keeps them), so the list is of our modules and packages, not of chunk names that change with
 * every build. After an intended change: `UPDATE_START_PATH=1 npx vitest run test/e2e/start-path.test.ts`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, isolatedEnv, ROOT, rawStdio } from "../helpers/cli.js";

const LIST = join(ROOT, "test/e2e/start-path.json");
const PRELOAD = join(ROOT, "test/fixtures/record-loads.mjs");

interface StartPath {
  modules: string[];
  packages: string[];
  builtins: string[];
}

/** What the loaded URLs hold: our sources and packages by the bundle's comments, and Node's builtins. */
function startPathOf(urls: string[]): StartPath {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const builtins = new Set<string>();
  for (const url of urls) {
    if (url.startsWith("node:")) builtins.add(url);
    if (!url.startsWith("file:")) continue;
    const text = readFileSync(fileURLToPath(url), "utf8");
    for (const m of text.matchAll(/^\/\/ (src\/\S+\.ts)$/gm)) modules.add(m[1] ?? "");
    for (const m of text.matchAll(/^\/\/ node_modules\/((?:@[^/\s]+\/)?[^/\s]+)\//gm))
      packages.add(m[1] ?? "");
  }
  const sorted = (s: Set<string>) => [...s].sort();
  return { modules: sorted(modules), packages: sorted(packages), builtins: sorted(builtins) };
}

const { env, dir, cleanup } = isolatedEnv();
afterAll(cleanup);

describe("the start path of the built CLI", () => {
  it("loads only the listed modules before it answers tools/list", async () => {
    const record = join(dir, "loads.json");
    const cli = rawStdio({ ...env, RECORD_LOADS_TO: record }, ["--import", PRELOAD, CLI, "--sandbox"]);
    try {
      const listed = new Promise<void>((resolve) =>
        cli.onMessage((m) => {
          if (m.id === "tools") resolve();
        }),
      );
      cli.send({ jsonrpc: "2.0", id: "tools", method: "tools/list", params: {} });
      await listed;
    } finally {
      cli.child.kill();
    }
    const found = startPathOf(JSON.parse(readFileSync(record, "utf8")) as string[]);
    expect(found.modules).toContain("src/cli.ts");
    if (process.env.UPDATE_START_PATH === "1") writeFileSync(LIST, `${JSON.stringify(found, null, 2)}\n`);
    const expected = JSON.parse(readFileSync(LIST, "utf8")) as StartPath;
    const added = (k: keyof StartPath) => found[k].filter((m) => !expected[k].includes(m));
    const gone = (k: keyof StartPath) => expected[k].filter((m) => !found[k].includes(m));
    const kinds = ["modules", "packages", "builtins"] as const;
    // Added to the start path: a cold start pays for it. Gone: update the list so it stays exact.
    expect(Object.fromEntries(kinds.map((k) => [k, { added: added(k), gone: gone(k) }]))).toEqual(
      Object.fromEntries(kinds.map((k) => [k, { added: [], gone: [] }])),
    );
  });
});
