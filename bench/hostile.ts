/**
 * (n) of `npm run bench`, or alone: `npm run bench:hostile` (run `npm run build` first). Issue 30's
 * load test: the built CLI in `--auth oauth` on SQLite over loopback HTTP, the keyed sandbox in a
 * process of its own (timeScale 1, so slow tasks stay in flight), USERS well-behaved users signed in
 * (bench/oauth.ts's way), each on the sessionless 2026-07-28 wire calling list_models, a paid
 * generate_image with wait 0 and tasks/get on a task of theirs in turn, THINK_MS apart. Phases of
 * SECONDS alternate, ROUNDS times: quiet, then the same users while bench/hostile-attacker.ts (a
 * process of its own) floods every anonymous route from many addresses and one signed-in key
 * hammers every pool. Reports the users' p50/p99 in each (goal: hostile p99 at most 1.5 x quiet,
 * the median of the rounds' ratios), the attacker's answers by kind (429/503 with Retry-After), and
 * the store's growth beyond the users' own against the worst case docs/security.md documents.
 * BENCH_HOSTILE_SLOW_MS=<ms> also prints each call slower than that and when in its phase it began.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { Agent, setGlobalDispatcher } from "undici";
import { CLI, isolatedEnv } from "../test/helpers/cli.js";
import { inParallel, registerClient, signInDirect, userAddress } from "../test/helpers/sign-in-direct.js";
import { callTool, rpc } from "../test/helpers/tasks-wire.js";
import type { Plan } from "./hostile-attacker.js";
import { cpuMsOf } from "./memory-probe.js";
import { keyedSandbox, oauthServer } from "./oauth.js";
import { attackerCommand, place } from "./pin-cores.js";
import { median, ms, percentile, print } from "./stats.js";

const USERS = Number(process.env.BENCH_HOSTILE_USERS ?? 100);
const SECONDS = Number(process.env.BENCH_HOSTILE_SECONDS ?? 20);
const ROUNDS = Number(process.env.BENCH_HOSTILE_ROUNDS ?? 2);
const THINK_MS = Number(process.env.BENCH_HOSTILE_THINK_MS ?? 4_000);
const P99_GOAL = 1.5;
const SLOW_MS = Number(process.env.BENCH_HOSTILE_SLOW_MS ?? Number.POSITIVE_INFINITY);
const ATTACKER = fileURLToPath(new URL("./hostile-attacker.ts", import.meta.url));
const KiB = 1024;

// See bench/oauth.ts: idle sockets dropped before the server's keep-alive ends them.
setGlobalDispatcher(
  new Agent({ keepAliveTimeout: 500, keepAliveMaxTimeout: 500, connect: { timeout: 60_000 } }),
);

interface User {
  token: string;
  taskId: string;
}

interface Phase {
  latencies: number[];
  /** The same latencies by operation. */
  byOp: Record<string, number[]>;
  failures: number;
  /** Bytes of the store in use (pages less free pages) it grew by. */
  growth: number;
  seconds: number;
  /** The server's CPU time in the phase, ms. */
  cpu: number;
  attacker?: Record<string, Record<string, number>>;
}

/** The SQLite store's bytes in use, read through a connection of its own (it sees the WAL). */
function storeBytes(path: string): number {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const one = (pragma: string) => Number(Object.values(db.prepare(`PRAGMA ${pragma}`).get() ?? {})[0]);
    return (one("page_count") - one("freelist_count")) * one("page_size");
  } finally {
    db.close();
  }
}

/** One user's loop for `seconds`: a call, a pause of about THINK_MS, and again. */
async function behave(url: string, user: User, i: number, seconds: number, into: Phase): Promise<void> {
  const until = performance.now() + seconds * 1000;
  // Users start spread over one pause, as they would, not in lockstep.
  await new Promise((r) => setTimeout(r, Math.random() * THINK_MS));
  for (let n = i; performance.now() < until; n++) {
    const o = { key: user.token, tasks: true };
    const started = performance.now();
    try {
      const r =
        n % 3 === 0
          ? await callTool(url, "list_models", {}, o)
          : n % 3 === 1
            ? await callTool(
                url,
                "generate_image",
                { model: "sandbox-image-fast", prompt: `u${i} ${n}`, wait: 0 },
                o,
              )
            : await rpc(url, "tasks/get", { taskId: user.taskId }, o);
      if (r.status !== 200 || r.error !== undefined || r.result?.isError === true) into.failures++;
    } catch {
      into.failures++;
    }
    const took = performance.now() - started;
    const op = ["list_models", "generate_image", "tasks/get"][n % 3] as string;
    if (took > SLOW_MS)
      print(`    slow: ${op} ${ms(took)} from ${(seconds - (until - started) / 1000).toFixed(2)} s`);
    into.latencies.push(took);
    into.byOp[op] = [...(into.byOp[op] ?? []), took];
    await new Promise((r) => setTimeout(r, THINK_MS * (0.5 + Math.random())));
  }
}

/** The attacker's process for `plan.seconds`; its tally. */
function attack(plan: Plan): Promise<Record<string, Record<string, number>>> {
  const [command, args] = attackerCommand(["--import", "tsx", ATTACKER, JSON.stringify(plan)]);
  const child = spawn(command, args, {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  return new Promise((resolve, reject) =>
    child.once("exit", (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split("\n").at(-1) ?? "{}"))
        : reject(new Error(`attacker exited ${code}`)),
    ),
  );
}

async function phase(
  server: number,
  url: string,
  users: User[],
  store: string,
  plan?: Plan,
  seconds = SECONDS,
): Promise<Phase> {
  const p: Phase = { latencies: [], byOp: {}, failures: 0, growth: 0, seconds, cpu: 0 };
  const before = storeBytes(store);
  const cpu = cpuMsOf(server);
  const attacker =
    plan === undefined
      ? undefined
      : Promise.all([attack({ ...plan, part: "rest" }), attack({ ...plan, part: "bodies" })]).then(
          ([a, b]) => ({ ...a, ...b }),
        );
  await Promise.all(users.map((u, i) => behave(url, u, i, seconds, p)));
  if (attacker !== undefined) p.attacker = await attacker;
  p.growth = storeBytes(store) - before;
  p.cpu = cpuMsOf(server) - cpu;
  return p;
}

/**
 * What docs/security.md's limits table allows the attacker to store in `seconds`: each anonymous
 * limit's deployment figure per window (twice across a window's edge) times what one admission
 * stores, every counter row it may leave, the key's upload bytes (perUserBytes), and its ledger
 * records (the records it made, each its body and about 1 KiB).
 */
function documentedWorstCase(seconds: number, records: number, recordBody: number): number {
  const minutes = Math.ceil(seconds / 60) + 1;
  const registrations = minutes * 120 * 4 * KiB;
  const interactions = Math.min(8_000, minutes * 200 + 2_000) * KiB;
  const counterRows = (minutes * (120 + 200 + 200 + 120) + 2 * 2_000) * 2 * 100;
  const uploads = 128 * KiB * KiB;
  return registrations + interactions + counterRows + uploads + records * (recordBody + KiB);
}

/** Every hostile phase's attacker tally, summed. */
function attackerTally(hostile: Phase[]): Record<string, Record<string, number>> {
  const kinds: Record<string, Record<string, number>> = {};
  for (const h of hostile)
    for (const [kind, counts] of Object.entries(h.attacker ?? {})) {
      const into = kinds[kind] ?? {};
      for (const [what, k] of Object.entries(counts)) into[what] = (into[what] ?? 0) + k;
      kinds[kind] = into;
    }
  return kinds;
}

function latencyLines(quiet: Phase[], hostile: Phase[]): void {
  const all = (ps: Phase[]) => ps.flatMap((p) => p.latencies);
  const cpu = (ps: Phase[]) => ps.reduce((a, p) => a + p.cpu, 0) / ps.reduce((a, p) => a + p.seconds * 10, 0);
  const opLatencies = (ps: Phase[], op: string) => ps.flatMap((p) => p.byOp[op] ?? []);
  const at = (ps: Phase[], op: string) => (q: number) => ms(percentile(opLatencies(ps, op), q));
  const ops = (ps: Phase[]) =>
    ["list_models", "generate_image", "tasks/get"]
      .map((op) => `${op} ${[50, 99].map(at(ps, op)).join(" / ")}`)
      .join(", ");
  const line = (label: string, ps: Phase[]) => {
    print(
      `    ${label} ${all(ps).length} calls, p50 ${ms(percentile(all(ps), 50))}, p99 ${ms(percentile(all(ps), 99))}, failed ${ps.reduce((a, p) => a + p.failures, 0)}; server CPU ${cpu(ps).toFixed(0)}% of a core`,
    );
    print(`             p50 / p99 by call: ${ops(ps)}`);
  };
  print(
    `(n) hostile mix: ${USERS} well-behaved users (list_models, generate_image wait 0, tasks/get; ~${THINK_MS} ms apart), ${ROUNDS} x ${SECONDS} s quiet and hostile, alternated`,
  );
  line("quiet:  ", quiet);
  line("hostile:", hostile);
  const ratio = median(
    hostile.map((h, i) => percentile(h.latencies, 99) / percentile(quiet[i]?.latencies ?? [], 99)),
  );
  print(
    `    users' p99 hostile / quiet (median of the rounds' ratios): ${ratio.toFixed(2)}x (goal <= ${P99_GOAL}: ${ratio <= P99_GOAL ? "met" : "NOT met"})`,
  );
}

function report(quiet: Phase[], hostile: Phase[]): void {
  const all = (ps: Phase[]) => ps.flatMap((p) => p.latencies);
  latencyLines(quiet, hostile);
  const kinds = attackerTally(hostile);
  print(
    "    the attacker's answers, by kind (status or refusal: count; retryAfter = 429/503 with Retry-After):",
  );
  for (const [kind, counts] of Object.entries(kinds))
    print(
      `      ${kind}: ${Object.entries(counts)
        .map(([w, k]) => `${w} ${k}`)
        .join(", ")}`,
    );
  // The users' own growth per call, from the quiet phases, taken off the hostile phases' growth.
  const perCall = quiet.reduce((a, p) => a + p.growth, 0) / Math.max(1, all(quiet).length);
  const own = perCall * all(hostile).length;
  const growth = hostile.reduce((a, p) => a + p.growth, 0) - own;
  const records = kinds["MCP tasks"]?.started ?? 0;
  const bound = documentedWorstCase(SECONDS * ROUNDS, records, 200);
  print(
    `    store growth beyond the users' own (${(own / KiB).toFixed(0)} KiB): ${(growth / KiB).toFixed(0)} KiB in ${SECONDS * ROUNDS} s of attack; documented worst case ${(bound / KiB).toFixed(0)} KiB (goal: within it: ${growth <= bound ? "met" : "NOT met"})`,
  );
}

/** (n), on a store, files and sandbox of its own. */
export async function hostileMix(): Promise<void> {
  const uploadMiB = Number(process.env.BENCH_HOSTILE_UPLOAD_MIB ?? 8);
  const iso = isolatedEnv();
  const keys = await keyedSandbox(USERS + 1, 1);
  // BENCH_CPU_PROF=DIR: the server writes a CPU profile there when it stops;
  // BENCH_SERVER_NODE_OPTIONS adds options of its own (a preload that traces, say), as in (j).
  const prof = process.env.BENCH_CPU_PROF;
  const nodeOptions = [prof && `--cpu-prof --cpu-prof-dir=${prof}`, process.env.BENCH_SERVER_NODE_OPTIONS]
    .filter(Boolean)
    .join(" ");
  const options = nodeOptions === "" ? {} : { NODE_OPTIONS: nodeOptions };
  const { cli, issuer } = await oauthServer({ ...iso.env, ...options, GENERATION_BASE_URL: keys.url });
  try {
    const clientId = await registerClient(issuer);
    const tokens = await inParallel(
      keys.keys,
      8,
      async (key, i) => (await signInDirect(issuer, clientId, key, { from: userAddress(i) })).access,
    );
    const attacker = tokens.pop() as string;
    const url = `${issuer}/mcp`;
    const users = await inParallel(tokens, 16, async (token, i) => {
      const r = await callTool(
        url,
        "generate_image",
        { model: "sandbox-image-fast", prompt: `task of u${i}` },
        { key: token, tasks: true },
      );
      if (r.result?.resultType !== "task") throw new Error(`no task: ${JSON.stringify(r).slice(0, 300)}`);
      return { token, taskId: r.result.taskId } as User;
    });
    const store = join(iso.dir, "ledger.sqlite");
    const pid = cli.child.pid as number;
    print(`    ${place(pid, [keys.pid, process.pid])}`); // quiet and hostile phases alike
    const plan: Plan = {
      issuer,
      token: attacker,
      clientId,
      seconds: SECONDS,
      width: Number(process.env.BENCH_HOSTILE_WIDTH ?? 4),
      idle: Number(process.env.BENCH_HOSTILE_IDLE ?? 400),
      bodyMiB: Number(process.env.BENCH_HOSTILE_BODY_MIB ?? 16),
      uploadMiB,
      part: "rest",
    };
    const quiet: Phase[] = [];
    const hostile: Phase[] = [];
    await phase(pid, url, users, store, undefined, Math.min(SECONDS, 5)); // warm-up, not counted
    for (let round = 0; round < ROUNDS; round++) {
      quiet.push(await phase(pid, url, users, store));
      hostile.push(await phase(pid, url, users, store, plan));
    }
    report(quiet, hostile);
  } catch (error) {
    print(
      `    server (exit ${cli.child.exitCode}) stderr: ${cli.stderr().trim().split("\n").slice(-5).join(" | ")}`,
    );
    throw error;
  } finally {
    await cli.stop();
    keys.stop();
    iso.cleanup();
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (!existsSync(CLI)) throw new Error("dist/cli.js is missing: run `npm run build` first");
  hostileMix().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
