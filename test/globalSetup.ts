/**
 * Tests that spawn the CLI run the built `dist/cli.js`, as hosts do. Rebuild it first when any
 * source is newer than the build, so those tests never exercise stale code.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const BUILT = join(ROOT, "dist", "cli.js");
const SOURCES = ["src", "package.json", "scripts"];

function newestMtime(path: string): number {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** `vitest run test/ledger` needs no build: only spawned-CLI tests (test/server) do. */
function onlyOtherTestsSelected(): boolean {
  const filters = process.argv.slice(2).filter((a) => !a.startsWith("-") && a !== "run" && a !== "watch");
  return filters.length > 0 && !filters.some((f) => /server|cli|viewer/.test(f));
}

export default function setup(): void {
  if (onlyOtherTestsSelected()) return;
  const built = newestMtime(BUILT);
  const sources = Math.max(...SOURCES.map((s) => newestMtime(join(ROOT, s))));
  if (built > sources) return;
  execFileSync(process.execPath, [join(ROOT, "scripts", "bundle.mjs")], { cwd: ROOT, stdio: "inherit" });
}
