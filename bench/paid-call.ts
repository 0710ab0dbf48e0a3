/**
 * Part (g) of `npm run bench` (bench/server.ts; `BENCH_PARTS=g` runs it alone): the paid call
 * against its floor. `BENCH_PAID_CALLS` sets the count; `BENCH_CPU_PROF=DIR` profiles our server.
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CLI } from "../test/helpers/cli.js";
import { median, ms, percentile, print, time } from "./stats.js";

const PAID_CALLS = Number(process.env.BENCH_PAID_CALLS ?? 300);
const PAID_MEDIAN_TARGET = 1.3;
const PAID_P99_TARGET = 1.5;
const MINIMAL = fileURLToPath(new URL("./minimal-server.mjs", import.meta.url));

/**
 * (g) One paid call as the host sees it: generate_image with `wait: 0` through our CLI (spending
 * check, durable claim, the POST within the call's budget, the result, the delivered mark) against
 * the minimal SDK server making the same POST with no ledger. Interleaved, every prompt new, so
 * every call is new work on both sides.
 */
export async function paidCalls(serviceEnv: Record<string, string>): Promise<void> {
  const connect = async (args: string[], env = serviceEnv) => {
    const c = new Client({ name: "bench", version: "1.0.0" });
    await c.connect(new StdioClientTransport({ command: process.execPath, args, env }));
    return c;
  };
  // BENCH_CPU_PROF=DIR writes a CPU profile of our server (node --cpu-prof) into DIR.
  const prof = process.env.BENCH_CPU_PROF;
  const ours = await connect(prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`, CLI] : [CLI]);
  const minimal = await connect([MINIMAL]);
  let n = 0;
  const submit = (c: Client) => async () => {
    const args = { model: "sandbox-image-fast", prompt: `bench paid call ${n++}`, wait: 0 };
    const r = await c.callTool({ name: "generate_image", arguments: args });
    if (r.isError) throw new Error(`generate_image failed: ${JSON.stringify(r.content)}`);
  };
  try {
    for (let i = 0; i < 30; i++) {
      await submit(minimal)();
      await submit(ours)();
    }
    const oursTimes: number[] = [];
    const bareTimes: number[] = [];
    for (let i = 0; i < PAID_CALLS; i++) {
      bareTimes.push(await time(submit(minimal)));
      oursTimes.push(await time(submit(ours)));
    }
    const med = median(oursTimes) / median(bareTimes);
    const p99 = percentile(oursTimes, 99) / percentile(bareTimes, 99);
    const met = (x: number, target: number) => `target <= ${target}: ${x <= target ? "met" : "NOT met"}`;
    print(`(g) paid call, generate_image wait 0 over stdio, ${PAID_CALLS} calls each, interleaved`);
    print(
      `    ours median ${ms(median(oursTimes))}, p99 ${ms(percentile(oursTimes, 99))}; minimal SDK server with the same POST median ${ms(median(bareTimes))}, p99 ${ms(percentile(bareTimes, 99))}`,
    );
    print(`    median ratio ${med.toFixed(2)} (${met(med, PAID_MEDIAN_TARGET)})`);
    print(`    p99 ratio ${p99.toFixed(2)} (${met(p99, PAID_P99_TARGET)})`);
  } finally {
    await Promise.all([ours.close(), minimal.close()]);
  }
}
