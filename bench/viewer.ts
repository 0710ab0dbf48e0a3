/**
 * The media viewer, measured (npm run bench:viewer):
 *  (a) its HTML: bytes as served by resources/read, and gzipped;
 *  (b) time from a tool result reaching the host page to the first image painted (Element Timing
 *      in the view's frame), in Debian's Chromium behind the ext-apps AppBridge over the built
 *      server and the sandbox on loopback: signed URL allowed by the CSP, and read through the host;
 *  (c) cold start, spawn of `node dist/cli.js --sandbox` to tools/list answered over stdio, this
 *      build against a baseline build of another commit (default: where this branch left main),
 *      runs interleaved in alternating order, medians.
 * Flags: --runs N (b and c, default 9 and 31), --baseline REF.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { hasChromium } from "../test/helpers/chromium.js";
import { CLI, isolatedEnv, ROOT } from "../test/helpers/cli.js";
import { openBrowser } from "../test/viewer/browser.js";
import { probe } from "../test/viewer/probes-api.js";
import { startStack } from "../test/viewer/stack.js";

const { values } = parseArgs({ options: { runs: { type: "string" }, baseline: { type: "string" } } });
const print = (line: string) => process.stdout.write(`${line}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const ms = (x: number) => `${x.toFixed(0)} ms`;

async function paintTimes(runs: number): Promise<void> {
  if (!hasChromium()) {
    print("(b) SKIPPED: /usr/bin/chromium is not installed (apt-get install -y chromium)");
    return;
  }
  const s = await startStack({ timeScale: 20 });
  const b = await openBrowser(s.client);
  try {
    for (const [mode, csp] of [
      ["signed URL (origin in the CSP)", undefined],
      ["read through the host (no media origin)", {}],
    ] as const) {
      const times: number[] = [];
      let kind = "";
      for (let i = 0; i < runs + 1; i++) {
        kind = "";
        const args = { model: "sandbox-image-fast", prompt: `bench image ${mode} ${i}`, wait: 30 };
        const { frame } = await b.show("generate_image", args, csp ? { csp } : {});
        let painted: Array<{ name: string; at: number }> = [];
        for (let t = 0; t < 200 && painted.length === 0; t++) {
          painted = await probe(frame, "painted");
          if (painted.length === 0) await new Promise((r) => setTimeout(r, 25));
        }
        const sent = await b.page.evaluate(
          () =>
            (globalThis as unknown as import("../test/viewer/browser.js").HostWindow).hostLog.resultSentAt,
        );
        const first = painted[0];
        if (!first) throw new Error("no image was painted within 5 s");
        for (let t = 0; t < 100 && kind === ""; t++) kind = (await probe(frame, "images"))[0]?.source ?? "";
        if (i > 0) times.push(first.at - sent); // the first run warms the browser and the server
      }
      print(
        `(b) result to first image painted, ${mode} [${kind}]: median ${ms(median(times))}, max ${ms(Math.max(...times))} over ${runs} (aim < 300 ms)`,
      );
    }
  } finally {
    await b.close();
    await s.close();
  }
}

function coldStart(cli: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [cli, "--sandbox"], { env, stdio: ["pipe", "pipe", "ignore"] });
    let out = "";
    const timer = setTimeout(() => child.kill(), 20_000);
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const answered = out.split("\n").some((line) => {
        try {
          return (JSON.parse(line) as { id?: unknown; result?: unknown }).id === 2;
        } catch {
          return false;
        }
      });
      if (answered) {
        const took = performance.now() - started;
        clearTimeout(timer);
        child.kill();
        resolve(took);
      }
    });
    child.once("exit", () => reject(new Error("the server exited before answering tools/list"))); // no-op once resolved
    const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
    const clientInfo = { name: "bench", version: "1" };
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  });
}

/** Builds `ref` into .tmp/viewer-baseline (git archive, this checkout's node_modules). */
function buildBaseline(ref: string): string {
  const dir = join(ROOT, ".tmp", "viewer-baseline");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tar = execFileSync("git", ["archive", ref], { cwd: ROOT, maxBuffer: 1 << 28 });
  execFileSync("tar", ["-x", "-C", dir], { input: tar });
  if (!existsSync(join(dir, "node_modules")))
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  execFileSync(process.execPath, ["scripts/bundle.mjs"], { cwd: dir, stdio: "ignore" });
  return join(dir, "dist", "cli.js");
}

async function coldStarts(runs: number): Promise<void> {
  const ref =
    values.baseline ?? execFileSync("git", ["merge-base", "HEAD", "main"], { cwd: ROOT }).toString().trim();
  const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT }).toString().trim();
  if (ref === head) {
    print("(c) baseline is this very commit: pass --baseline REF (a commit without the viewer)");
    return;
  }
  const baseline = buildBaseline(ref);
  const iso = isolatedEnv();
  const mine: number[] = [];
  const theirs: number[] = [];
  try {
    await coldStart(CLI, iso.env); // warm the file cache for both
    await coldStart(baseline, iso.env);
    // Which of a pair runs first matters on a busy machine (tens of ms): alternate it.
    for (let i = 0; i < runs; i++) {
      if (i % 2 === 0) {
        mine.push(await coldStart(CLI, iso.env));
        theirs.push(await coldStart(baseline, iso.env));
      } else {
        theirs.push(await coldStart(baseline, iso.env));
        mine.push(await coldStart(CLI, iso.env));
      }
    }
  } finally {
    iso.cleanup();
  }
  const [a, b] = [median(mine), median(theirs)];
  // The median of paired differences resists the machine's drift better than two medians.
  const paired = median(mine.map((x, i) => x - (theirs[i] ?? Number.NaN)));
  print(
    `(c) cold start to tools/list: this build ${ms(a)}, baseline ${ref.slice(0, 9)} ${ms(b)} (medians of ${runs}); median paired difference ${ms(paired)} = ${((paired / b) * 100).toFixed(1)}% (aim within 5%)`,
  );
}

execFileSync(process.execPath, [join(ROOT, "scripts", "bundle.mjs")], { cwd: ROOT, stdio: "inherit" });
const s = await startStack();
const html = (
  (await s.client.readResource({ uri: "ui://generation/viewer" })).contents[0] as { text: string }
).text;
await s.close();
print(
  `(a) viewer HTML: ${Buffer.byteLength(html)} bytes, ${gzipSync(html).byteLength} gzipped (limit 153600 bytes)`,
);
const runs = values.runs === undefined ? undefined : Number(values.runs);
await paintTimes(runs ?? 9);
await coldStarts(runs ?? 31);
