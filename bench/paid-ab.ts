/**
 * The paid call of two (or more) builds side by side against the durable floor, in one run:
 * `BENCH_CLIS=<another build>,dist/cli.js npx tsx bench/paid-ab.ts` (copy that build's dist
 * folder aside first, inside the checkout, so its imports resolve). Every server gets the same calls in turn, the order
 * rotated each call, so load on a shared machine falls on every side alike; each round prints
 * median, p99 and CPU per call (all a call causes, from /proc) as ratios to the floor
 * (bench/minimal-server.mjs with MINIMAL_DURABLE_DB, as in part (g), bench/paid-call.ts).
 * `BENCH_PAID_CALLS` calls per round (400), `BENCH_ROUNDS` rounds (3).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SANDBOX_API_KEY } from "../src/sandbox/sandbox.js";
import { CLI, isolatedEnv, startSandboxCli } from "../test/helpers/cli.js";
import { median, percentile, print, time } from "./stats.js";

const CALLS = Number(process.env.BENCH_PAID_CALLS ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CLIS = (process.env.BENCH_CLIS ?? CLI).split(",").map((p) => resolve(p));
const MINIMAL = fileURLToPath(new URL("./minimal-server.mjs", import.meta.url));

/** CPU time (user + system, ms) the process has used, from /proc (Linux). */
function cpuMs(pid: number | null | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

async function main(): Promise<void> {
  const iso = isolatedEnv();
  const sandbox = await startSandboxCli(iso.env);
  const env = { ...iso.env, GENERATION_BASE_URL: sandbox.url, GENERATION_API_KEY: SANDBOX_API_KEY };
  const servers: { label: string; client: Client; pid: number | null }[] = [];
  const connect = async (label: string, script: string, e: Record<string, string>) => {
    const client = new Client({ name: "bench", version: "1.0.0" });
    const transport = new StdioClientTransport({ command: process.execPath, args: [script], env: e });
    await client.connect(transport);
    servers.push({ label, client, pid: transport.pid });
  };
  let n = 0;
  const call = (c: Client) => async () => {
    const args = { model: "sandbox-image-fast", prompt: `bench paid call ${n++}`, wait: 0 };
    const r = await c.callTool({ name: "generate_image", arguments: args });
    if (r.isError) throw new Error(`generate_image failed: ${JSON.stringify(r.content)}`);
  };
  try {
    const floorDb = join(iso.dir, "minimal-claims.sqlite");
    await connect("durable floor", MINIMAL, { ...env, MINIMAL_DURABLE_DB: floorDb, NODE_NO_WARNINGS: "1" });
    for (const [i, cli] of CLIS.entries())
      await connect(cli, cli, {
        ...env,
        GENERATION_STORE: `sqlite://${join(iso.dir, `ledger-${i}.sqlite`)}`,
      });
    for (let i = 0; i < 30; i++) for (const s of servers) await call(s.client)();
    for (let round = 0; round < ROUNDS; round++) {
      const times = servers.map(() => [] as number[]);
      const before = servers.map((s) => cpuMs(s.pid));
      for (let i = 0; i < CALLS; i++)
        for (let k = 0; k < servers.length; k++) {
          const j = (k + i) % servers.length;
          times[j]?.push(await time(call((servers[j] as (typeof servers)[0]).client)));
        }
      const cpu = servers.map((s, i) => (cpuMs(s.pid) - (before[i] ?? 0)) / CALLS);
      const floor = { median: median(times[0] ?? []), p99: percentile(times[0] ?? [], 99), cpu: cpu[0] ?? 1 };
      print(
        `round ${round + 1} of ${CALLS} calls each, load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
      );
      for (const [i, s] of servers.entries()) {
        const m = median(times[i] ?? []);
        const p = percentile(times[i] ?? [], 99);
        const c = cpu[i] ?? Number.NaN;
        print(
          `    ${s.label}: median ${m.toFixed(2)} ms (${(m / floor.median).toFixed(2)}x), p99 ${p.toFixed(1)} ms (${(p / floor.p99).toFixed(2)}x), CPU ${c.toFixed(2)} ms (${(c / floor.cpu).toFixed(2)}x)`,
        );
      }
    }
  } finally {
    await Promise.all(servers.map((s) => s.client.close()));
    await sandbox.stop();
    iso.cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
