/**
 * bench:install: what a first-time user waits for. From the packed tarball, with an empty npm cache
 * each time, on Node 24: `npm install` (npm 12, then npm 11), then the installed binary started with
 * --sandbox until `tools/list` is answered, then one paid call. Prints the tarball's and the
 * installed node_modules' sizes. Dependencies come from the npm registry, so the install figure
 * includes the network; run it more than once before trusting one figure.
 *
 * npm 11 runs the optional sqlite3's install script, which downloads a prebuilt binary or, where
 * it cannot (as here, with only the npm registry reachable), compiles SQLite from source; the
 * `npm 11 --omit=optional` row shows the install without it, which is what Node 22.13+ needs.
 *
 *   npm run bench:install            (npm 12, npm 11, npm 11 --omit=optional)
 *   npm run bench:install -- 12      (one)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { install, mb, node24, npmOf, pack, sizeOf, startAndPay } from "../scripts/packaged.js";

const TARGET_S = 15;
const majors = process.argv.slice(2).map(Number).filter(Number.isInteger);
const work = mkdtempSync(join(tmpdir(), "bench-install-"));
const print = (line: string) => process.stdout.write(`${line}\n`);
const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

try {
  const tarball = pack(work);
  const node = node24();
  print(`tarball: ${mb(sizeOf(tarball))} packed`);
  print("npm                      install   start→tools/list   total    node_modules   first paid call");
  const chains =
    majors.length > 0
      ? majors.map((m) => npmOf(m, node))
      : [
          npmOf(12, node),
          npmOf(11, node),
          { ...npmOf(11, node), label: "npm 11 --omit=optional", args: ["--omit=optional"] },
        ];
  for (const tc of chains) {
    const installed = install(tc, tarball, work);
    const session = await startAndPay(node, installed);
    const total = installed.installMs + session.toolsListMs;
    const size = sizeOf(join(installed.dir, "node_modules"));
    print(
      `${tc.label.padEnd(24)} ${s(installed.installMs).padEnd(9)} ${s(session.toolsListMs).padEnd(18)} ` +
        `${s(total).padEnd(8)} ${mb(size).padEnd(14)} ok (task ${session.paid.taskId})` +
        (total / 1000 > TARGET_S ? `  over the ${TARGET_S} s target` : ""),
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
