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
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SANDBOX_API_KEY } from "../src/sandbox/sandbox.js";
import { CLI, isolatedEnv, startHttpCli, startSandboxCli } from "../test/helpers/cli.js";
import { approvalCost } from "./approval.js";
import { batchCost } from "./batch.js";
import { catalogCost, catalogCostWithApps, coldStarts } from "./cold-start.js";
import { delayProxy } from "./delay-proxy.js";
import { taskDetection } from "./detection.js";
import { hostileMix } from "./hostile.js";
import { oauthCosts } from "./oauth.js";
import { paidCalls } from "./paid-call.js";
import { mean, ms, percentile, print, time } from "./stats.js";
import { taskCreation } from "./tasks.js";
import { viewerUploadCost } from "./viewer-upload.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const CALLS_PER_SESSION = Number(process.env.BENCH_CALLS_PER_SESSION ?? 10);
/** (f): signed-in users on one replica, each a session of their own, and their calls each (issue 33's goal). */
const OAUTH_USERS = Number(process.env.BENCH_OAUTH_USERS ?? 1_000);
const OAUTH_CALLS = Number(process.env.BENCH_OAUTH_CALLS ?? 3);
const RATIO_TARGET = 1.1;
const DELAY_MS = Number(process.env.BENCH_SERVICE_DELAY_MS ?? 20);
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

/** Which parts to run, e.g. `BENCH_PARTS=g` while working on the paid call (default: all). */
const PARTS = process.env.BENCH_PARTS ?? (process.env.BENCH_ONLY === "oauth" ? "efk" : "abcdefghijklmn");

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
