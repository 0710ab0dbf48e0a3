/**
 * `npm run bench:polling`: how soon a finished task reaches the caller, and at how many reads, with
 * the fixed 2/4/8/15 s schedule and with the schedule learned from the ledger, side by side.
 *
 * The built CLI (dist/cli.js) serves MCP over stdio, as hosts run it, against the sandbox over real
 * loopback HTTP. The sandbox runs here behind a thin recorder that notes when each submission
 * arrived (the task's creation, on the sandbox clock at timeScale 1) and counts each task's reads.
 * Sandbox durations are fixed (src/sandbox/rules-visual.ts, rules-audio.ts): image 3 s, speech
 * 4 s, video 10 s, so the moment a task turns terminal is known to the millisecond, and the delay is
 * the time from then until the tool call returns.
 *
 * Fixed: a server with no history, so a fresh ledger (and process) per task. Learned: one server
 * whose ledger learns; its first BENCH_POLL_WARMUP tasks of each kind are not measured. Kinds and
 * schedules run side by side; each chain is sequential. Run `npm run build` first.
 */
import { existsSync } from "node:fs";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SANDBOX_API_KEY } from "../src/sandbox/sandbox.js";
import { CLI, isolatedEnv } from "../test/helpers/cli.js";
import { KINDS, type Kind, type Recorder, recordedSandbox } from "./recorded-sandbox.js";

const RUNS = Number(process.env.BENCH_POLL_RUNS ?? 10);
const WARMUP = Number(process.env.BENCH_POLL_WARMUP ?? 16);
const TARGET = 0.1;

const print = (line: string) => process.stdout.write(`${line}\n`);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const p95 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(0.95 * xs.length) - 1)] ?? 0;

async function connect(serviceUrl: string): Promise<{ client: Client; close(): Promise<void> }> {
  const iso = isolatedEnv({ GENERATION_BASE_URL: serviceUrl, GENERATION_API_KEY: SANDBOX_API_KEY });
  const client = new Client({ name: "bench-polling", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI], env: iso.env }));
  return {
    client,
    close: async () => {
      await client.close();
      iso.cleanup();
    },
  };
}

interface Sample {
  delayMs: number;
  reads: number;
}

/** One task through the tool: the delay past its terminal moment, and the reads it took. */
async function once(client: Client, rec: Recorder, kind: Kind, i: number): Promise<Sample> {
  const r = await client.callTool({ name: kind.tool, arguments: { ...kind.args(i), wait: 40 } });
  const returned = Date.now();
  const task = (r.structuredContent as { task?: { id: string; status: string } } | undefined)?.task;
  if (r.isError || !task) throw new Error(`${kind.tool} failed: ${JSON.stringify(r.content).slice(0, 300)}`);
  if (task.status !== "succeeded") throw new Error(`${kind.tool}: task ${task.id} returned ${task.status}`);
  const created = rec.created.get(task.id);
  if (created === undefined) throw new Error(`no submission recorded for ${task.id}`);
  const delayMs = returned - (created + kind.durationMs);
  if (delayMs < 0) throw new Error(`${task.id} returned ${-delayMs} ms before it could have finished`);
  return { delayMs, reads: rec.reads.get(task.id) ?? 0 };
}

async function fixedChain(rec: Recorder, kind: Kind): Promise<Sample[]> {
  const out: Sample[] = [];
  for (let i = 0; i < RUNS; i++) {
    const server = await connect(rec.url); // no history: the fixed schedule
    try {
      out.push(await once(server.client, rec, kind, i));
    } finally {
      await server.close();
    }
  }
  return out;
}

async function learnedChain(rec: Recorder, kind: Kind): Promise<Sample[]> {
  const server = await connect(rec.url);
  try {
    const warm: Sample[] = [];
    for (let i = 0; i < WARMUP; i++) warm.push(await once(server.client, rec, kind, -1 - i));
    if (process.env.BENCH_POLL_VERBOSE)
      print(`${kind.name} warm-up delays: ${warm.map((x) => x.delayMs).join(", ")} ms`);
    const out: Sample[] = [];
    for (let i = 0; i < RUNS; i++) out.push(await once(server.client, rec, kind, i));
    if (process.env.BENCH_POLL_VERBOSE)
      print(`${kind.name} learned delays: ${out.map((x) => x.delayMs).join(", ")} ms`);
    return out;
  } finally {
    await server.close();
  }
}

function row(kind: Kind, schedule: string, s: Sample[]): string {
  const delays = s.map((x) => x.delayMs);
  const reads = s.map((x) => x.reads);
  const share = (mean(delays) / kind.durationMs) * 100;
  return `| ${kind.name} | ${kind.durationMs / 1000} s | ${schedule} | ${s.length} | ${Math.round(mean(delays))} ms | ${Math.round(p95(delays))} ms | ${share.toFixed(1)}% | ${mean(reads).toFixed(2)} (max ${Math.max(...reads)}) |`;
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error("dist/cli.js is missing: run `npm run build` first");
  const rec = await recordedSandbox();
  print(
    `bench:polling: ${RUNS} measured tasks per kind and schedule (learned after ${WARMUP} warm-up tasks)\n`,
  );
  try {
    const results = await Promise.all(
      KINDS.map(async (kind) => {
        const [fixed, learned] = await Promise.all([fixedChain(rec, kind), learnedChain(rec, kind)]);
        return { kind, fixed, learned };
      }),
    );
    print(
      "| kind | duration | schedule | tasks | mean delay | p95 delay | mean delay / duration | reads per task |",
    );
    print("|---|---|---|---|---|---|---|---|");
    let met = true;
    for (const { kind, fixed, learned } of results) {
      print(row(kind, "fixed 2/4/8/15", fixed));
      print(row(kind, "learned", learned));
      const ok =
        mean(learned.map((x) => x.delayMs)) < TARGET * kind.durationMs &&
        mean(learned.map((x) => x.reads)) <= mean(fixed.map((x) => x.reads));
      met &&= ok;
    }
    print(
      `\nTarget: learned mean delay under ${TARGET * 100}% of the task's duration, with no more reads per task than fixed: ${met ? "met" : "NOT met"}.`,
    );
  } finally {
    await rec.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:polling failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
