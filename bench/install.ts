/**
 * bench:install: what a first-time user waits for. From the packed tarball, with an empty npm cache
 * each time, on Node 24: `npm install` (npm 12, then npm 11), then the installed binary started with
 * --sandbox until `tools/list` is answered, then one paid call. Prints the tarball's and the
 * installed node_modules' sizes. Dependencies come from the npm registry, so the install figure
 * includes the network; run it more than once before trusting one figure.
 *
 *   npm run bench:install            (both npm versions)
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
  print("npm     install   start→tools/list   total    node_modules   first paid call");
  for (const major of majors.length > 0 ? majors : [12, 11]) {
    const tc = npmOf(major, node);
    const installed = install(tc, tarball, work);
    const session = await startAndPay(node, installed);
    const total = installed.installMs + session.toolsListMs;
    const size = sizeOf(join(installed.dir, "node_modules"));
    print(
      `${tc.label.padEnd(7)} ${s(installed.installMs).padEnd(9)} ${s(session.toolsListMs).padEnd(18)} ` +
        `${s(total).padEnd(8)} ${mb(size).padEnd(14)} ok (task ${session.paid.taskId})` +
        (total / 1000 > TARGET_S ? `  over the ${TARGET_S} s target` : ""),
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
