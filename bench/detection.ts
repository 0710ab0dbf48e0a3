/**
 * Part (i) of `npm run bench` (bench/server.ts; `BENCH_PARTS=i` runs it alone): how soon a finished
 * generation is seen, as a share of its duration, for image, speech and video, on the built CLI
 * over loopback HTTP in raw 2026-07-28 JSON-RPC (test/helpers/tasks-wire.ts), through both paths a
 * host has:
 *  - MCP Tasks: the call becomes a task, polled through `tasks/get` at the `pollIntervalMs` each
 *    answer gives, as Claude Code does;
 *  - `poll_task`: the call answers at once (`wait: 0`) and `poll_task` with a `wait` follows the
 *    task, as the result's `next` says.
 * The sandbox runs behind a recorder (bench/recorded-sandbox.ts) that notes when each task was
 * created and each read of it, so the moment it turned terminal is known to the millisecond. Each
 * kind's chain alternates the two paths on one server, whose ledger learns the model's duration
 * from both; its first BENCH_TASK_WARMUP tasks are not counted. Goal: mean delay at most 3% of the
 * duration on each path, with no more reads of the service per task than the fixed 2/4/8/15 s
 * schedule would make.
 */
import { SANDBOX_API_KEY } from "../src/sandbox/sandbox.js";
import { fixedReadMs } from "../src/shared/poll-schedule.js";
import { isolatedEnv, startHttpCli } from "../test/helpers/cli.js";
import { callTool, pollTask } from "../test/helpers/tasks-wire.js";
import { KINDS, type Kind, type Recorder, recordedSandbox } from "./recorded-sandbox.js";
import { mean, percentile, print } from "./stats.js";

const RUNS = Number(process.env.BENCH_TASK_RUNS ?? 8);
/** The learned schedule narrows a fixed duration to within 1% in about 14 runs (test/shared/poll-schedule.test.ts). */
const WARMUP = Number(process.env.BENCH_TASK_WARMUP ?? 16);
const TARGET = 0.03;
/** poll_task's wait: within a host's ~60 s call, and past every kind's duration. */
const POLL_WAIT_S = 30;

type Path = "tasks/get" | "poll_task";
const PATHS: Path[] = ["tasks/get", "poll_task"];

interface Seen {
  delayMs: number;
  /** Of which after the server's read that saw it finished: presenting, storing, answering. */
  afterReadMs: number;
  reads: number;
  /** Requests the client made: tasks/get polls, or tool calls (the submission and poll_task). */
  requests: number;
}

/** Reads the fixed schedule makes to see a task of `durationMs` (a read at once, then 2, 4, 8, 15 s apart). */
function fixedReads(durationMs: number): number {
  let n = 0;
  while (fixedReadMs(n) < durationMs) n++;
  return n + 1;
}

/** The finished result of either path, and the client's requests for it. */
async function follow(url: string, kind: Kind, i: number, path: Path) {
  if (path === "tasks/get") {
    const created = await callTool(url, kind.tool, kind.args(i), { tasks: true });
    if (created.result?.resultType !== "task")
      throw new Error(`no task: ${JSON.stringify(created).slice(0, 300)}`);
    const { final, seen } = await pollTask(url, created.result.taskId, { timeoutMs: 120_000 });
    if (final.result?.status !== "completed")
      throw new Error(`${kind.tool}: ${JSON.stringify(final).slice(0, 300)}`);
    return { result: final.result.result, requests: seen.length };
  }
  const sent = await callTool(url, kind.tool, { ...kind.args(i), wait: 0 });
  const taskId = sent.result?.structuredContent?.task?.id as string | undefined;
  if (taskId === undefined) throw new Error(`${kind.tool}: ${JSON.stringify(sent).slice(0, 300)}`);
  const polled = await callTool(url, "poll_task", { taskId, wait: POLL_WAIT_S });
  return { result: polled.result, requests: 2 };
}

/** One task through `path`: how long after its finish the client had it. */
async function once(url: string, rec: Recorder, kind: Kind, i: number, path: Path): Promise<Seen> {
  const { result, requests } = await follow(url, kind, i, path);
  const at = Date.now();
  const task = result?.structuredContent?.task as { id?: string; status?: string } | undefined;
  if (result?.isError || task?.id === undefined || task.status !== "succeeded")
    throw new Error(`${kind.tool} via ${path}: ${JSON.stringify(result).slice(0, 300)}`);
  const submitted = rec.created.get(task.id);
  if (submitted === undefined) throw new Error(`no submission recorded for ${task.id}`);
  const delayMs = at - (submitted + kind.durationMs);
  if (delayMs < 0) throw new Error(`${task.id} seen ${-delayMs} ms before it could have finished`);
  return {
    delayMs,
    afterReadMs: at - (rec.lastRead.get(task.id) ?? at),
    reads: rec.reads.get(task.id) ?? 0,
    requests,
  };
}

/** One kind's chain: warm-up, then RUNS tasks on each path, alternating. */
async function chain(url: string, rec: Recorder, kind: Kind): Promise<Map<Path, Seen[]>> {
  for (let i = 0; i < WARMUP; i++) await once(url, rec, kind, -1 - i, PATHS[i % 2] as Path);
  const out = new Map<Path, Seen[]>(PATHS.map((p) => [p, []]));
  for (let i = 0; i < RUNS; i++)
    for (const path of PATHS) out.get(path)?.push(await once(url, rec, kind, i, path));
  return out;
}

/** (i) detection latency through tasks/get and poll_task, per kind, after a warm-up that teaches the schedule. */
export async function taskDetection(): Promise<void> {
  const rec = await recordedSandbox();
  const iso = isolatedEnv({ GENERATION_BASE_URL: rec.url, GENERATION_API_KEY: SANDBOX_API_KEY });
  const server = await startHttpCli([], iso.env);
  try {
    const results = await Promise.all(
      KINDS.map(async (kind) => ({ kind, out: await chain(server.url, rec, kind) })),
    );
    print(
      `(i) a finished generation seen through tasks/get at pollIntervalMs and through poll_task (wait ${POLL_WAIT_S}), HTTP; ${RUNS} tasks per kind and path after ${WARMUP} learning`,
    );
    print(
      "| kind | duration | path | mean delay | p95 delay | mean delay / duration | of which after the server's read | service reads per task (fixed schedule) | client requests per task |",
    );
    print("|---|---|---|---|---|---|---|---|---|");
    const missed: string[] = [];
    for (const { kind, out } of results) {
      const fixed = fixedReads(kind.durationMs);
      for (const [path, seen] of out) {
        const delays = seen.map((x) => x.delayMs);
        const reads = seen.map((x) => x.reads);
        const share = mean(delays) / kind.durationMs;
        if (share > TARGET || Math.max(...reads) > fixed) missed.push(`${kind.name} via ${path}`);
        print(
          `| ${kind.name} | ${kind.durationMs / 1000} s | ${path} | ${Math.round(mean(delays))} ms | ${Math.round(percentile(delays, 95))} ms | ${(share * 100).toFixed(1)}% | ${Math.round(mean(seen.map((x) => x.afterReadMs)))} ms | ${mean(reads).toFixed(2)}, max ${Math.max(...reads)} (${fixed}) | ${mean(seen.map((x) => x.requests)).toFixed(1)} |`,
        );
      }
    }
    const verdict = missed.length === 0 ? "met" : `NOT met (${missed.join(", ")})`;
    print(
      `    target: mean delay at most ${TARGET * 100}% of the duration on each path, reads never above the fixed schedule's: ${verdict}`,
    );
  } finally {
    await server.stop();
    await rec.close();
    iso.cleanup();
  }
}
