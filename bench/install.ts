/**
 * bench:install: what a first-time user waits for. From the packed tarball, with an empty npm cache
 * each time, `npm install` with the npm of every supported Node (npm 10 from `npm@10`, 11 from
 * `npm@11`, 12 from `npm@12`) on Node 22, 24 and 26 (the registry's `node@22`, `node@24`, `node@26`, as
 * scripts/packaged.ts caches them in .tmp/tools), then the installed binary started with --sandbox
 * until `tools/list` is answered, then one paid call. Prints the tarball's and each install's size.
 * Dependencies come from the npm registry, so the install figure includes the network; run it more
 * than once before trusting one figure.
 *
 * Nothing native is installed with the package: the ledger runs on Node's built-in node:sqlite.
 *
 *   npm run bench:install                 (npm 10, 11, 12 on Node 22, 24 and 26)
 *   npm run bench:install -- 12           (npm 12 only, on each)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  install,
  mb,
  nodeOf,
  npmOf,
  pack,
  sizeOf,
  startAndPay,
  type Toolchain,
} from "../scripts/packaged.js";

const TARGET_S = 10;
const NPMS = [10, 11, 12];
const NODES = [22, 24, 26];
const asked = process.argv.slice(2).map(Number).filter(Number.isInteger);
const work = mkdtempSync(join(tmpdir(), "bench-install-"));
const print = (line: string) => process.stdout.write(`${line}\n`);
const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const versionOf = (bin: string, args: string[] = ["--version"]): string =>
  spawnSync(bin, args, { encoding: "utf8" }).stdout.trim();

let over = 0;
try {
  const tarball = pack(work);
  print(`tarball: ${mb(sizeOf(tarball))} packed`);
  print("node      npm        install   start→tools/list   total    node_modules   first paid call");
  for (const major of NODES) {
    const node = nodeOf(major);
    const nodeVersion = versionOf(node);
    for (const npm of asked.length > 0 ? asked : NPMS) {
      const tc: Toolchain = npmOf(npm, node);
      const npmVersion = versionOf(node, [tc.npmCli, "--version"]);
      const row = `${nodeVersion.padEnd(9)} ${npmVersion.padEnd(10)}`;
      let installed: ReturnType<typeof install>;
      try {
        installed = install(tc, tarball, work);
      } catch (error) {
        // npm 12 refuses a Node it does not support (it needs ^22.22.2, ^24.15 or >= 26).
        print(`${row} failed: ${(error as Error).message.split("\n").slice(0, 3).join(" | ")}`);
        over++;
        continue;
      }
      const session = await startAndPay(node, installed);
      const total = installed.installMs + session.toolsListMs;
      const size = sizeOf(join(installed.dir, "node_modules"));
      const slow = installed.installMs / 1000 > TARGET_S;
      if (slow) over++;
      print(
        `${row} ${s(installed.installMs).padEnd(9)} ${s(session.toolsListMs).padEnd(18)} ` +
          `${s(total).padEnd(8)} ${mb(size).padEnd(14)} ok (task ${session.paid.taskId})` +
          (slow ? `  install over the ${TARGET_S} s target` : ""),
      );
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exitCode = over > 0 ? 1 : 0;
