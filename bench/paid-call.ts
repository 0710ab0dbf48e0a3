/**
 * Part (g) of `npm run bench` (bench/server.ts; `BENCH_PARTS=g` runs it alone): the paid call and
 * list_models against their floor. `BENCH_PAID_CALLS` sets the count; `BENCH_CPU_PROF=DIR`
 * profiles our server.
 */
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CLI } from "../test/helpers/cli.js";
import { median, ms, percentile, print, time } from "./stats.js";

const PAID_CALLS = Number(process.env.BENCH_PAID_CALLS ?? 300);
/** Against the durable floor (issue 31's goal); against the bare POST the commit alone costs more. */
const TARGETS = { paidMedian: 1.1, paidP99: 1.5, listMedian: 1.15 };
const MINIMAL = fileURLToPath(new URL("./minimal-server.mjs", import.meta.url));

type Call = (c: Client) => () => Promise<void>;
interface Server {
  client: Client;
  /** The server process's id (its CPU time is read from /proc). */
  pid: number | null;
}

/**
 * CPU time (user + system, ms) the process has used, from /proc (Linux; NaN elsewhere). Load on a
 * shared machine stretches wall-clock times but not the CPU a call costs, so this is the steadier
 * measure of our own work; a disk sync's wait is not in it.
 */
function cpuMs(pid: number | null): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime at USER_HZ=100
  } catch {
    return Number.NaN;
  }
}

/**
 * PAID_CALLS of `call` on each server, interleaved (each of ours right after one on each floor),
 * and the CPU time per call each server used over the timed calls (everything the call caused,
 * work after its answer included).
 */
async function sideBySide(
  ours: Server,
  floors: Server[],
  call: Call,
): Promise<{ ours: number[]; floors: number[][]; cpu: { ours: number; floors: number[] } }> {
  for (let i = 0; i < 30; i++) {
    for (const floor of floors) await call(floor.client)();
    await call(ours.client)();
  }
  const times = { ours: [] as number[], floors: floors.map(() => [] as number[]) };
  const before = [ours, ...floors].map((s) => cpuMs(s.pid));
  for (let i = 0; i < PAID_CALLS; i++) {
    for (const [j, floor] of floors.entries()) times.floors[j]?.push(await time(call(floor.client)));
    times.ours.push(await time(call(ours.client)));
  }
  const [o = Number.NaN, ...f] = [ours, ...floors].map(
    (s, i) => (cpuMs(s.pid) - (before[i] ?? Number.NaN)) / PAID_CALLS,
  );
  return { ...times, cpu: { ours: o, floors: f } };
}

const met = (x: number, target: number) => `target <= ${target}: ${x <= target ? "met" : "NOT met"}`;

/**
 * Median and p99 of each side, and the ratio of the medians and of the p99s, against `targets`
 * where the comparison has one (the bare POST has none: the synced commit alone is more than 1.1x).
 */
function report(
  label: string,
  floorLabel: string,
  t: { ours: number[]; floor: number[] },
  targets?: { median: number; p99?: number },
) {
  print(
    `    ${label}: ours median ${ms(median(t.ours))}, p99 ${ms(percentile(t.ours, 99))}; ${floorLabel} median ${ms(median(t.floor))}, p99 ${ms(percentile(t.floor, 99))}`,
  );
  const med = median(t.ours) / median(t.floor);
  const tail = percentile(t.ours, 99) / percentile(t.floor, 99);
  const said = (x: number, target?: number) => (target === undefined ? "" : ` (${met(x, target)})`);
  print(`    ${label} median ratio ${med.toFixed(2)}${said(med, targets?.median)}`);
  if (targets === undefined || targets.p99 !== undefined)
    print(`    ${label} p99 ratio ${tail.toFixed(2)}${said(tail, targets?.p99)}`);
}

/**
 * (g) One paid call as the host sees it: generate_image with `wait: 0` through our CLI (spending
 * check, durable claim, the POST within the call's budget, the result, the delivered mark) against
 * the minimal SDK server making the same POST with no ledger, and against that server storing the
 * identity and body in one synced SQLite commit first (MINIMAL_DURABLE_DB): the service's interface
 * asks every client to persist them before dispatch, so that is the floor for a paid call that keeps
 * the rule. Interleaved, every prompt new, so every call is new work on every side. Then list_models (our listing, text and structured, from
 * the service's answer) against the floor's same GET returned as it came.
 */
export async function paidCalls(serviceEnv: Record<string, string>): Promise<void> {
  // BENCH_CPU_PROF=DIR writes CPU profiles (node --cpu-prof) of our server and of the durable floor
  // into DIR, as ours.cpuprofile and floor.cpuprofile, so the two read side by side.
  const prof = process.env.BENCH_CPU_PROF;
  const profiled = (name: string, script: string) =>
    prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`, `--cpu-prof-name=${name}.cpuprofile`, script] : [script];
  const connect = async (args: string[], env = serviceEnv): Promise<Server> => {
    const client = new Client({ name: "bench", version: "1.0.0" });
    const transport = new StdioClientTransport({ command: process.execPath, args, env });
    await client.connect(transport);
    return { client, pid: transport.pid };
  };
  const ours = await connect(profiled("ours", CLI));
  const minimal = await connect([MINIMAL]);
  // The same floor, storing each identity and body in one synced SQLite commit before its POST, in
  // the directory our ledger is in (the service's interface asks that of any client).
  const durableDb = join(serviceEnv.HOME ?? tmpdir(), "minimal-claims.sqlite");
  const durable = await connect(profiled("floor", MINIMAL), {
    ...serviceEnv,
    MINIMAL_DURABLE_DB: durableDb,
    NODE_NO_WARNINGS: "1",
  });
  let n = 0;
  const call =
    (name: string, args: () => Record<string, unknown>): Call =>
    (c) =>
    async () => {
      const r = await c.callTool({ name, arguments: args() });
      if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
    };
  const image = () => ({ model: "sandbox-image-fast", prompt: `bench paid call ${n++}`, wait: 0 });
  try {
    print(
      `(g) ${PAID_CALLS} calls each over stdio, interleaved with a minimal SDK server's (bench/minimal-server.mjs)`,
    );
    const paid = await sideBySide(ours, [minimal, durable], call("generate_image", image));
    const [bare = [], synced = []] = paid.floors;
    const label = "paid call (generate_image, wait 0)";
    report(label, "the same POST", { ours: paid.ours, floor: bare });
    const paidTargets = { median: TARGETS.paidMedian, p99: TARGETS.paidP99 };
    report(
      `${label} vs one synced write then the POST`,
      "that floor",
      { ours: paid.ours, floor: synced },
      paidTargets,
    );
    const cost = median(synced) / median(bare);
    print(`    one synced write then the POST is ${cost.toFixed(2)}x the POST alone`);
    const [bareCpu = Number.NaN, syncedCpu = Number.NaN] = paid.cpu.floors;
    print(
      `    CPU per paid call (all it causes, its answer's later writes included): ours ${ms(paid.cpu.ours)}; the same POST ${ms(bareCpu)}; one synced write then the POST ${ms(syncedCpu)} (ratio ${(paid.cpu.ours / syncedCpu).toFixed(2)})`,
    );
    const list = await sideBySide(
      ours,
      [minimal],
      call("list_models", () => ({})),
    );
    report(
      "list_models",
      "the same GET",
      { ours: list.ours, floor: list.floors[0] ?? [] },
      { median: TARGETS.listMedian },
    );
  } finally {
    await Promise.all([ours.client.close(), minimal.client.close(), durable.client.close()]);
  }
}
