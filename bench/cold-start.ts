/**
 * Parts (a) and (d) of `npm run bench` (bench/server.ts): cold start, spawn of the built CLI to
 * tools/list answered over stdio, next to a minimal SDK server and peers; and what tools/list costs
 * a client, with and without MCP Apps.
 */
import { fileURLToPath } from "node:url";
import { listTools } from "../scripts/figures.js";
import { CLI, rawStdio } from "../test/helpers/cli.js";
import { preparePeers, type Runner } from "./peer-servers.js";
import { median, ms, print } from "./stats.js";

const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 10);
const COLD_TARGET_MS = 350;
const PEER_RATIO_TARGET = 0.8;
const CATALOG_TARGET_BYTES = 20_000;
const MINIMAL = fileURLToPath(new URL("./minimal-server.mjs", import.meta.url));

interface ListedTool {
  name: string;
  _meta?: { ui?: { visibility?: string[] } };
}

interface ColdStart {
  ms: number;
  /** The tools/list result, parsed. */
  tools: ListedTool[];
  /** Bytes of the tools/list result as JSON. */
  bytes: number;
}

/**
 * One cold start: raw JSON-RPC lines (test/helpers), so client-library start-up is not counted.
 * Resolves when the tools/list answer has arrived whole; rejects with the server's last stderr
 * line if it dies first.
 */
function coldStart(env: Record<string, string>, args = [CLI, "--sandbox"]): Promise<ColdStart> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const server = rawStdio(env, args, "bench");
    let answer: ColdStart | undefined;
    let failure = "no tools/list answer within 20 s";
    let timer = setTimeout(() => server.child.kill(), 20_000);
    server.onMessage((message) => {
      if (message.id !== 2 || answer !== undefined) return;
      const result = message.result as { tools?: ListedTool[] } | undefined;
      if (!Array.isArray(result?.tools)) failure = `tools/list failed: ${JSON.stringify(message.error)}`;
      else {
        const bytes = Buffer.byteLength(JSON.stringify(result));
        answer = { ms: performance.now() - started, tools: result.tools, bytes };
      }
      server.child.stdin.end(); // every server here exits when its stdin closes; the timer is the backstop
      clearTimeout(timer);
      timer = setTimeout(() => server.child.kill(), 5_000);
    });
    server.child.once("error", reject);
    server.child.once("exit", (code, signal) => {
      clearTimeout(timer);
      const last = server.stderr().trim().split("\n").at(-1) ?? "";
      if (answer !== undefined) resolve(answer);
      else reject(new Error(`${failure} (exit ${signal ?? code}${last ? `; stderr: ${last}` : ""})`));
    });
    server.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  });
}

/** (a): ours, the minimal server and each peer in turn, COLD_RUNS rounds, so machine load hits all alike. */
export async function coldStarts(env: Record<string, string>): Promise<{ ours: ColdStart; peers: Runner[] }> {
  print(`(a) cold start, spawn to tools/list answered (stdio, --sandbox), median of ${COLD_RUNS}`);
  const { peers: ready, out: notes } = preparePeers(print);
  let last: ColdStart | undefined;
  const ours: Runner = { label: "ours", args: [CLI, "--sandbox"], env: {}, times: [] };
  const minimal: Runner = { label: "minimal", args: [MINIMAL], env: {}, times: [] };
  let runners = [ours, minimal, ...ready];
  const run = async (runner: Runner, counted: boolean) => {
    try {
      const started = await coldStart({ ...env, ...runner.env }, runner.args);
      runner.tools = started.tools.length;
      runner.bytes = started.bytes;
      if (runner === ours) last = started;
      if (counted) runner.times.push(started.ms);
    } catch (error) {
      if (runner === ours || runner === minimal) throw error;
      notes.push(`peer ${runner.label} left out: ${(error as Error).message}`);
      runners = runners.filter((r) => r !== runner);
    }
  };
  for (const runner of runners) await run(runner, false); // warms the OS file cache; not counted
  for (let i = 0; i < COLD_RUNS; i++) for (const runner of runners) await run(runner, true);
  const cold = median(ours.times);
  const floor = median(minimal.times);
  print(
    `    ${ms(cold)}  (min ${ms(Math.min(...ours.times))}, max ${ms(Math.max(...ours.times))}; target < ${COLD_TARGET_MS} ms: ${cold < COLD_TARGET_MS ? "met" : "NOT met"})`,
  );
  print(
    `    minimal SDK server with one tool, same run: ${ms(floor)}; ours is ${(cold / floor).toFixed(2)}x that floor`,
  );
  for (const note of notes) print(`    ${note}`);
  const peers = runners.filter((r) => r !== ours && r !== minimal);
  for (const peer of peers)
    print(`    peer ${peer.label} (${peer.tools} tools), same run: ${ms(median(peer.times))}`);
  const fastest = [...peers].sort((a, b) => median(a.times) - median(b.times))[0];
  if (fastest === undefined) {
    print(`    no peer measured: no ratio to the fastest peer (target <= ${PEER_RATIO_TARGET})`);
  } else {
    const ratio = cold / median(fastest.times);
    print(
      `    ours / fastest peer (${fastest.label}): ${ratio.toFixed(2)} (target <= ${PEER_RATIO_TARGET}: ${ratio <= PEER_RATIO_TARGET ? "met" : "NOT met"})`,
    );
  }
  if (last === undefined) throw new Error("no cold start of ours was measured");
  return { ours: last, peers };
}

/**
 * (d): the tools/list answer our cold starts received, as the model reads it (MCP Apps hosts hide a
 * tool whose _meta.ui.visibility leaves out "model"), whole and per tool, next to the peers'.
 */
export function catalogCost(ours: ColdStart, peers: Runner[]): void {
  const hidden = (t: ListedTool) => t._meta?.ui?.visibility?.includes("model") === false;
  const seen = ours.tools.filter((t) => !hidden(t));
  // The raw handshake declares no capabilities: this is what a client without MCP Apps receives.
  const met = ours.bytes <= CATALOG_TARGET_BYTES ? "met" : "NOT met";
  print(`(d) tools/list for a client without MCP Apps, JSON bytes (stdio, --sandbox)`);
  print(`    ${ours.bytes} bytes for ${ours.tools.length} tools (target <= ${CATALOG_TARGET_BYTES}: ${met})`);
  const sizes = seen.map((t) => ({ name: t.name, bytes: Buffer.byteLength(JSON.stringify(t)) }));
  for (const { name, bytes } of sizes.sort((a, b) => b.bytes - a.bytes))
    print(`    ${name.padEnd(16)} ${String(bytes).padStart(6)}`);
  const left = ours.tools.length - seen.length;
  if (left > 0) print(`    (${left} tool${left === 1 ? "" : "s"} hidden from the model not counted)`);
  for (const peer of peers) print(`    peer ${peer.label}: ${peer.bytes} bytes for ${peer.tools} tools`);
}

/**
 * (d), second half: tools/list as a client declaring MCP Apps receives it (stdio, --sandbox), measured
 * as `npm run figures` measures it for the docs (scripts/figures.ts).
 */
export async function catalogCostWithApps(): Promise<void> {
  const { bytes, tools } = await listTools(true);
  const met = bytes <= CATALOG_TARGET_BYTES ? "met" : "NOT met";
  print(
    `    with MCP Apps: ${bytes} bytes for ${tools.length} tools (target <= ${CATALOG_TARGET_BYTES}: ${met})`,
  );
}

/**
 * (b) list_models: MCP over stdio vs a direct fetch to the same sandbox, first on bare loopback (the
 * stringent figure: the service answers in about a millisecond), then with a service round trip of
 * DELAY_MS added by a proxy in front of the sandbox (closer to a real service).
 */
