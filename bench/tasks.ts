/**
 * MCP Tasks in `npm run bench`, on the built CLI over loopback HTTP in raw 2026-07-28 JSON-RPC
 * (test/helpers/tasks-wire.ts), as Claude Code runs them:
 *  (h) the time from tools/call to the CreateTaskResult (check, durable claim, the task stored)
 *      against the paid call's synchronous floor (the same generate_image with `wait: 0`: check,
 *      claim, the POST, the answer), interleaved, every prompt new; goal: task p99 under the floor's
 *      p99 plus 10 ms;
 *  (i) how soon a poller at `pollIntervalMs` sees a finished generation through tasks/get, for
 *      image, speech and video, once the server has learned the model's durations (its first
 *      BENCH_TASK_WARMUP tasks of each kind are not counted), and how many reads of the service each
 *      task took, next to the reads the fixed 2/4/8/15 s schedule makes for that duration; goal:
 *      mean delay at most 3% of the task's duration, no more reads than the fixed schedule.
 */

import { SANDBOX_API_KEY } from "../src/sandbox/sandbox.js";
import { fixedReadMs } from "../src/shared/poll-schedule.js";
import { isolatedEnv, startHttpCli } from "../test/helpers/cli.js";
import { callTool, pollTask } from "../test/helpers/tasks-wire.js";
import { KINDS, type Kind, type Recorder, recordedSandbox } from "./recorded-sandbox.js";

const CREATE_CALLS = Number(process.env.BENCH_TASK_CALLS ?? 200);
const RUNS = Number(process.env.BENCH_TASK_RUNS ?? 8);
const WARMUP = Number(process.env.BENCH_TASK_WARMUP ?? 10);
const CREATE_MARGIN_MS = 10;
const DETECT_TARGET = 0.03;

const print = (line: string) => process.stdout.write(`${line}\n`);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const pct = (xs: number[], p: number) =>
  sorted(xs)[Math.min(xs.length - 1, Math.max(0, Math.ceil((p / 100) * xs.length) - 1))] ?? Number.NaN;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** (h) tools/call to CreateTaskResult, next to the same call answered synchronously with `wait: 0`. */
export async function taskCreation(serviceEnv: Record<string, string>): Promise<void> {
  const iso = isolatedEnv(serviceEnv);
  const server = await startHttpCli([], { ...serviceEnv, ...iso.env });
  let n = 0;
  const sync = async () => {
    const r = await callTool(server.url, "generate_image", {
      model: "sandbox-image-fast",
      prompt: `bench floor ${n++}`,
      wait: 0,
    });
    if (r.result?.isError || r.result?.structuredContent === undefined)
      throw new Error(`generate_image failed: ${JSON.stringify(r).slice(0, 300)}`);
  };
  const task = async () => {
    const args = { model: "sandbox-image-fast", prompt: `bench task ${n++}` };
    const r = await callTool(server.url, "generate_image", args, { tasks: true });
    if (r.result?.resultType !== "task") throw new Error(`no task: ${JSON.stringify(r).slice(0, 300)}`);
  };
  try {
    for (let i = 0; i < 20; i++) {
      await sync();
      await task();
    }
    const floor: number[] = [];
    const created: number[] = [];
    for (let i = 0; i < CREATE_CALLS; i++) {
      floor.push(await timed(sync));
      created.push(await timed(task));
    }
    const met = pct(created, 99) < pct(floor, 99) + CREATE_MARGIN_MS;
    print(
      `(h) MCP task: tools/call to CreateTaskResult, generate_image over HTTP, ${CREATE_CALLS} calls each, interleaved`,
    );
    print(
      `    to the task: median ${ms(pct(created, 50))}, p99 ${ms(pct(created, 99))}; the synchronous floor (wait 0): median ${ms(pct(floor, 50))}, p99 ${ms(pct(floor, 99))}`,
    );
    print(`    target: task p99 under the floor's p99 + ${CREATE_MARGIN_MS} ms: ${met ? "met" : "NOT met"}`);
  } finally {
    await server.stop();
    iso.cleanup();
  }
}

interface Seen {
  delayMs: number;
  /** Of which after the server's read that saw it finished: presenting, storing, the tasks/get answer. */
  afterReadMs: number;
  reads: number;
  polls: number;
}

/** Reads the fixed schedule makes to see a task of `durationMs` (a read at once, then 2, 4, 8, 15 s apart). */
function fixedReads(durationMs: number): number {
  let n = 0;
  while (fixedReadMs(n) < durationMs) n++;
  return n + 1;
}

/** One task through tasks/get at pollIntervalMs: how long after its finish the poller saw it. */
async function once(url: string, rec: Recorder, kind: Kind, i: number): Promise<Seen> {
  const created = await callTool(url, kind.tool, kind.args(i), { tasks: true });
  const { final, seen } = await pollTask(url, created.result.taskId, { timeoutMs: 120_000 });
  const at = Date.now();
  const result = final.result?.result;
  const id = result?.structuredContent?.task?.id as string | undefined;
  if (final.result?.status !== "completed" || result?.isError || id === undefined)
    throw new Error(`${kind.tool}: ${JSON.stringify(final).slice(0, 300)}`);
  const submitted = rec.created.get(id);
  if (submitted === undefined) throw new Error(`no submission recorded for ${id}`);
  const read = rec.lastRead.get(id) ?? at;
  return {
    delayMs: at - (submitted + kind.durationMs),
    afterReadMs: at - read,
    reads: rec.reads.get(id) ?? 0,
    polls: seen.length,
  };
}

/** (i) detection latency through tasks/get, per kind, after a warm-up that teaches the schedule. */
export async function taskDetection(): Promise<void> {
  const rec = await recordedSandbox();
  const iso = isolatedEnv({ GENERATION_BASE_URL: rec.url, GENERATION_API_KEY: SANDBOX_API_KEY });
  const server = await startHttpCli([], iso.env);
  try {
    const results = await Promise.all(
      KINDS.map(async (kind) => {
        for (let i = 0; i < WARMUP; i++) await once(server.url, rec, kind, -1 - i);
        const out: Seen[] = [];
        for (let i = 0; i < RUNS; i++) out.push(await once(server.url, rec, kind, i));
        return { kind, out };
      }),
    );
    print(
      `(i) MCP task: a finished generation seen through tasks/get at pollIntervalMs (HTTP), ${RUNS} tasks per kind after ${WARMUP} learning`,
    );
    print(
      "| kind | duration | mean delay | p95 delay | mean delay / duration | of which after the server's read | service reads per task | fixed schedule's reads | tasks/get per task |",
    );
    print("|---|---|---|---|---|---|---|---|---|");
    let met = true;
    for (const { kind, out } of results) {
      const delays = out.map((x) => x.delayMs);
      const reads = out.map((x) => x.reads);
      const share = mean(delays) / kind.durationMs;
      const fixed = fixedReads(kind.durationMs);
      met &&= share <= DETECT_TARGET && Math.max(...reads) <= fixed;
      print(
        `| ${kind.name} | ${kind.durationMs / 1000} s | ${Math.round(mean(delays))} ms | ${Math.round(pct(delays, 95))} ms | ${(share * 100).toFixed(1)}% | ${Math.round(mean(out.map((x) => x.afterReadMs)))} ms | ${mean(reads).toFixed(2)} (max ${Math.max(...reads)}) | ${fixed} | ${mean(out.map((x) => x.polls)).toFixed(1)} |`,
      );
    }
    print(
      `    target: mean delay at most ${DETECT_TARGET * 100}% of the duration, reads never above the fixed schedule's: ${met ? "met" : "NOT met"}`,
    );
  } finally {
    await server.stop();
    await rec.close();
    iso.cleanup();
  }
}
