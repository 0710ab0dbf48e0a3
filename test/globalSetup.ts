/**
 * Tests that spawn the CLI run the built `dist/cli.js`, as hosts do, and they live in several folders.
 * Rebuild it first whenever any source is newer than the build (esbuild takes a second or two), so
 * no test ever exercises stale code.
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

export default function setup(): void {
  const built = newestMtime(BUILT);
  const sources = Math.max(...SOURCES.map((s) => newestMtime(join(ROOT, s))));
  if (built > sources) return;
  execFileSync(process.execPath, [join(ROOT, "scripts", "bundle.mjs")], { cwd: ROOT, stdio: "inherit" });
}
