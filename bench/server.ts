/**
 * `npm run bench`: the server's own costs, against the sandbox, on the built CLI (dist/).
 *  (a) cold start: spawn of `node dist/cli.js --sandbox` to tools/list answered over stdio (median),
 *      next to a minimal SDK server and to peer servers (bench/peers, installed there on first run);
 *  (b) list_models through MCP over stdio against a direct fetch to the same sandbox (ratio of means),
 *      on bare loopback and with a service round trip added by a delaying proxy;
 *  (c) 100 concurrent Streamable HTTP sessions calling list_models: throughput and p99 latency;
 *  (d) what tools/list costs a client without MCP Apps: bytes of JSON, in all and per tool, next to peers;
 *      and what it costs a client declaring MCP Apps (it is also listed the viewer's app-only tools);
 *  (e), (f), (k) what --auth oauth costs, against key mode in the same run (bench/oauth.ts): the
 *      sign-in flow's server time; 1,000 signed-in users' sessions x 3 list_models, throughput and
 *      p50/p99; resident memory per idle signed-in user at 1,000 users. BENCH_ONLY=oauth runs only these.
 *  (g) the paid call: generate_image with wait 0 over stdio against a minimal SDK server making the
 *      same POST (bench/minimal-server.mjs), and against it storing the identity in one synced
 *      commit first, median and p99 of each and their ratios; then list_models against the same
 *      server's same GET (bench/paid-call.ts).
 *  (h), (i) MCP Tasks: tools/call to CreateTaskResult against the synchronous floor (bench/tasks.ts);
 *      how soon a finished generation is seen through tasks/get and poll_task (bench/detection.ts).
 *  (j) a 30 MiB file through the media viewer's upload chunks against upload_asset by path: time
 *      and the server's RSS rise (bench/viewer-upload.ts).
 *  (l) a 10-item image batch (generate_batch) against 10 sequential generate_image (bench/batch.ts).
 *  (m) approval without a dialog: a quote, then the call with its token, against a plain call (bench/approval.ts).
 *  (n) 100 signed-in users' p99, quiet and under a hostile mix, and the store's growth (bench/hostile.ts).
 * The sandbox runs in its own process (`generation-mcp sandbox`), so it does not share an event loop
 * with either side being measured. Run `npm run build` first.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { listTools } from "../scripts/figures.js";
import { SANDBOX_API_KEY } from "../src/sandbox/sandbox.js";
import { CLI, isolatedEnv, rawStdio, startHttpCli, startSandboxCli } from "../test/helpers/cli.js";
import { approvalCost } from "./approval.js";
import { batchCost } from "./batch.js";
import { delayProxy } from "./delay-proxy.js";
import { taskDetection } from "./detection.js";
import { hostileMix } from "./hostile.js";
import { oauthCosts } from "./oauth.js";
import { paidCalls } from "./paid-call.js";
import { preparePeers, type Runner } from "./peer-servers.js";
import { mean, median, ms, percentile, print, time } from "./stats.js";
import { taskCreation } from "./tasks.js";
import { viewerUploadCost } from "./viewer-upload.js";

const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 10);
const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const CALLS_PER_SESSION = Number(process.env.BENCH_CALLS_PER_SESSION ?? 10);
/** (f): signed-in users on one replica, each a session of their own, and their calls each (issue 33's goal). */
const OAUTH_USERS = Number(process.env.BENCH_OAUTH_USERS ?? 1_000);
const OAUTH_CALLS = Number(process.env.BENCH_OAUTH_CALLS ?? 3);
const COLD_TARGET_MS = 350;
const PEER_RATIO_TARGET = 0.8;
const RATIO_TARGET = 1.1;
const DELAY_MS = Number(process.env.BENCH_SERVICE_DELAY_MS ?? 20);
const CATALOG_TARGET_BYTES = 20_000;
/** Which parts to run, e.g. `BENCH_PARTS=g` while working on the paid call (default: all). */
const PARTS = process.env.BENCH_PARTS ?? (process.env.BENCH_ONLY === "oauth" ? "efk" : "abcdefghijklmn");

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

/** Mean time of list_models through the stdio server vs a direct fetch, both against `serviceUrl`. */
async function overhead(
  serviceUrl: string,
  env: Record<string, string>,
): Promise<{ mcp: number; direct: number; ratio: number }> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI], env }));
  const direct = () =>
    fetch(`${serviceUrl}/api/generate/models`, {
      headers: { authorization: `Bearer ${SANDBOX_API_KEY}` },
    }).then((r) => r.json());
  const viaMcp = async () => {
    const r = await client.callTool({ name: "list_models", arguments: {} });
    if (r.isError) throw new Error(`list_models failed: ${JSON.stringify(r.content)}`);
  };
  try {
    for (let i = 0; i < 30; i++) {
      await direct();
      await viaMcp();
    }
    const directTimes: number[] = [];
    const mcpTimes: number[] = [];
    // Interleaved, so drift in machine load hits both sides alike.
    for (let i = 0; i < CALLS; i++) {
      directTimes.push(await time(direct));
      mcpTimes.push(await time(viaMcp));
    }
    return { mcp: mean(mcpTimes), direct: mean(directTimes), ratio: mean(mcpTimes) / mean(directTimes) };
  } finally {
    await client.close();
  }
}

/** (a): ours, the minimal server and each peer in turn, COLD_RUNS rounds, so machine load hits all alike. */
async function coldStarts(env: Record<string, string>): Promise<{ ours: ColdStart; peers: Runner[] }> {
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
function catalogCost(ours: ColdStart, peers: Runner[]): void {
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
async function catalogCostWithApps(): Promise<void> {
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
async function overheads(sandboxUrl: string, serviceEnv: Record<string, string>): Promise<void> {
  const line = (label: string, r: { mcp: number; direct: number; ratio: number }) =>
    print(
      `    ${label} MCP mean ${ms(r.mcp)}, direct mean ${ms(r.direct)}: ratio ${r.ratio.toFixed(2)} (target <= ${RATIO_TARGET}: ${r.ratio <= RATIO_TARGET ? "met" : "NOT met"}); overhead ${ms(r.mcp - r.direct)} per call`,
    );
  const bare = await overhead(sandboxUrl, { ...serviceEnv });
  print(
    `(b) list_models, ${CALLS} calls each, interleaved: MCP over stdio vs direct fetch to the same sandbox`,
  );
  line("loopback:    ", bare);
  const proxy = await delayProxy(sandboxUrl, DELAY_MS);
  try {
    line(
      `+${DELAY_MS} ms service:`,
      await overhead(proxy.url, { ...serviceEnv, GENERATION_BASE_URL: proxy.url }),
    );
  } finally {
    await proxy.close();
  }
}

/** (c) SESSIONS concurrent Streamable HTTP sessions calling list_models. */
async function httpSessions(serviceEnv: Record<string, string>): Promise<void> {
  const http = await startHttpCli([], serviceEnv);
  try {
    const clients = await Promise.all(
      Array.from({ length: SESSIONS }, async () => {
        const c = new Client({ name: "bench", version: "1.0.0" });
        await c.connect(new StreamableHTTPClientTransport(new URL(http.url)));
        return c;
      }),
    );
    await Promise.all(clients.map((c) => c.callTool({ name: "list_models", arguments: {} })));
    const latencies: number[] = [];
    const call = async (c: Client) => {
      const r = await c.callTool({ name: "list_models", arguments: {} });
      if (r.isError) throw new Error("list_models failed over HTTP");
    };
    const started = performance.now();
    await Promise.all(
      clients.map(async (c) => {
        for (let i = 0; i < CALLS_PER_SESSION; i++) latencies.push(await time(() => call(c)));
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    await Promise.all(clients.map((c) => c.close()));
    print(`(c) ${SESSIONS} concurrent HTTP sessions x ${CALLS_PER_SESSION} list_models calls`);
    print(
      `    throughput ${(latencies.length / elapsed).toFixed(0)} calls/s, p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}`,
    );
  } finally {
    await http.stop();
  }
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error("dist/cli.js is missing: run `npm run build` first");
  const iso = isolatedEnv();
  const sandbox = await startSandboxCli(iso.env);
  const serviceEnv = { ...iso.env, GENERATION_BASE_URL: sandbox.url, GENERATION_API_KEY: SANDBOX_API_KEY };
  try {
    const cold = PARTS.includes("a") || PARTS.includes("d") ? await coldStarts(iso.env) : undefined;
    if (PARTS.includes("b")) await overheads(sandbox.url, serviceEnv);
    if (PARTS.includes("g")) await paidCalls(serviceEnv);
    if (PARTS.includes("c")) await httpSessions(serviceEnv);
    if (cold !== undefined && PARTS.includes("d")) {
      catalogCost(cold.ours, cold.peers);
      await catalogCostWithApps();
    }
    if (/[efk]/.test(PARTS)) await oauthCosts(iso.env, PARTS, OAUTH_USERS, OAUTH_CALLS);
    if (PARTS.includes("h")) await taskCreation(serviceEnv);
    if (PARTS.includes("i")) await taskDetection();
    if (PARTS.includes("j")) await viewerUploadCost(serviceEnv, iso.dir, print);
    if (PARTS.includes("l")) await batchCost(serviceEnv);
    if (PARTS.includes("m")) await approvalCost(serviceEnv);
    if (PARTS.includes("n")) await hostileMix();
  } finally {
    await sandbox.stop();
    iso.cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
