/**
 * MCP Tasks in `npm run bench`, on the built CLI over loopback HTTP in raw 2026-07-28 JSON-RPC
 * (test/helpers/tasks-wire.ts), as Claude Code runs them (part (i), how soon a finished task is
 * seen, is bench/detection.ts):
 *  (h) the time from tools/call to the CreateTaskResult (check, durable claim, the task stored)
 *      against the paid call's synchronous floor (the same generate_image with `wait: 0`: check,
 *      claim, the POST, the answer), interleaved, every prompt new; goal: task p99 under the floor's
 *      p99 plus 10 ms.
 */

import { isolatedEnv, startHttpCli } from "../test/helpers/cli.js";
import { callTool } from "../test/helpers/tasks-wire.js";

const CREATE_CALLS = Number(process.env.BENCH_TASK_CALLS ?? 200);
const CREATE_MARGIN_MS = 10;

const print = (line: string) => process.stdout.write(`${line}\n`);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const pct = (xs: number[], p: number) =>
  sorted(xs)[Math.min(xs.length - 1, Math.max(0, Math.ceil((p / 100) * xs.length) - 1))] ?? Number.NaN;
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
