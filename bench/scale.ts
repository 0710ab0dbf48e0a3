/**
 * `npm run bench:scale` (a bench, not a timed test; needs HAProxy and PostgreSQL; run `npm run build`
 * first): the OAuth deployment docs/oauth.md documents, on loopback (bench/scale-deploy.ts: three
 * replicas of the built CLI on one fresh PostgreSQL schema behind HAProxy on the documented file,
 * its health check on; the sandbox in a process of its own). In phases of BENCH_SCALE_USERS
 * (default `100,300`, what ends within 10 minutes on a loaded 2-core machine; `1000,5000` for
 * 1,000 users, then 4,000 more, so 5,000 signed in) users sign in through
 * the front, each with a sandbox key and an address of their own, then every signed-in user runs
 * the mixed load of bench/scale-load.ts (BENCH_SCALE_WIDTH users at once, default 48); midway
 * through each phase one replica is SIGKILLed and started again on its port.
 *
 * Reports per phase: sign-in rate; throughput, p50/p99 of the load's calls; failed calls, split into
 * those in flight when the replica died and the rest (goal 0); double dispatch (a call's identity
 * with more than one task in the sandbox, goal 0); lost tasks (an identity that claimed a task
 * and did not find it finished at the end, goal 0); RSS per signed-in user of each replica; the
 * store's size. Exits 1 when a goal is missed.
 */
import { rssOf } from "./memory-probe.js";
import { type ScaleDeployment, startScaleDeployment } from "./scale-deploy.js";
import { type Call, type UserOutcome, userLoad } from "./scale-load.js";
import { signInAll } from "./scale-sign-in.js";

const PHASES = (process.env.BENCH_SCALE_USERS ?? "100,300").split(",").map(Number);
const WIDTH = Number(process.env.BENCH_SCALE_WIDTH ?? 48);
const UPLOAD_EVERY = 10;
const RUN = Date.now().toString(36);
const print = (line: string) => process.stdout.write(`${line}\n`);
const ms = (x: number) => `${x.toFixed(0)} ms`;
const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] ?? Number.NaN;

interface User {
  token: string;
  from: string;
}

let missed = 0;
function goal(what: string, n: number): void {
  if (n > 0) missed++;
  print(`    ${what}: ${n}${n > 0 ? "  <-- goal 0" : ""}`);
}

async function phase(d: ScaleDeployment, users: User[], n: number, victim: number): Promise<void> {
  const rssBefore = d.replicas.map((r) => rssOf(r.child.pid as number));
  const fresh = n - users.length;
  const started = performance.now();
  users.push(...(await signInAll(d, users.length, n - users.length)));
  const signInS = (performance.now() - started) / 1000;
  const rssSignedIn = d.replicas.map((r) => rssOf(r.child.pid as number));
  print(
    `\n${n} users signed in through the front (${fresh} new in ${signInS.toFixed(1)} s: ${(fresh / signInS).toFixed(0)} sign-ins/s)`,
  );
  const calls: Call[] = [];
  const t0 = performance.now();
  const clock = () => performance.now() - t0;
  const outage = { killed: Number.NaN, dead: Number.NaN, back: Number.NaN };
  const identity = (u: number) => `scale-${RUN}-${n}-${u}`;
  const outcomes: UserOutcome[] = [];
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (let u = next++; u < users.length; u = next++) {
      const user = users[u] as User;
      outcomes.push(
        await userLoad({
          url: `${d.issuer}/mcp`,
          token: user.token,
          from: user.from,
          identity: identity(u),
          upload: u % UPLOAD_EVERY === 0,
          calls,
          clock,
        }),
      );
      done++;
    }
  };
  const kill = (async () => {
    while (done < users.length / 2) await new Promise((r) => setTimeout(r, 20));
    outage.killed = clock();
    await d.kill(victim);
    outage.dead = clock();
    await d.restart(victim);
    outage.back = clock();
  })();
  await Promise.all(Array.from({ length: WIDTH }, worker));
  const elapsed = clock() / 1000;
  await kill;
  report({ n, victim, calls, elapsed, outage });
  const tasks = await d.sandboxTasks();
  const perIdentity = new Map<string, number>();
  for (const t of tasks) perIdentity.set(t.prompt, (perIdentity.get(t.prompt) ?? 0) + 1);
  const mine = outcomes.map((o) => perIdentity.get(o.identity) ?? 0);
  goal(
    "double dispatch (identities with more than one task in the sandbox)",
    mine.filter((x) => x > 1).length,
  );
  const claimed = outcomes.filter((o) => o.taskId !== undefined);
  goal(
    `lost tasks (of ${claimed.length} identities that claimed one, not found finished at the end)`,
    claimed.filter((o) => o.final !== "succeeded").length,
  );
  goal("identities that never claimed a task", outcomes.length - claimed.length);
  const finals = new Map<string, number>();
  for (const o of outcomes) finals.set(o.final, (finals.get(o.final) ?? 0) + 1);
  print(`    final statuses: ${JSON.stringify(Object.fromEntries(finals))}`);
  const rssAfter = d.replicas.map((r) => rssOf(r.child.pid as number));
  const rise = (to: number[], i: number) =>
    `${(((to[i] ?? 0) - (rssBefore[i] ?? 0)) / fresh / 1024).toFixed(1)}`;
  const kept = [0, 1, 2].filter((i) => i !== victim);
  print(
    `    RSS rise per new user (no GC forced), replicas ${kept.map((i) => i + 1).join(" and ")}: over the sign-ins ` +
      `${kept.map((i) => rise(rssSignedIn, i)).join(" and ")} KiB, over sign-ins and load ${kept.map((i) => rise(rssAfter, i)).join(" and ")} KiB; ` +
      `RSS after the load ${rssAfter.map(mib).join(", ")} (replica ${victim + 1} restarted)`,
  );
  const size = await d.storeSize();
  print(
    `    store: ${mib(size.bytes)} in ${size.tables} tables, ${size.rows} rows; ${(size.bytes / n / 1024).toFixed(1)} KiB per signed-in user`,
  );
}

function report(r: {
  n: number;
  victim: number;
  calls: Call[];
  elapsed: number;
  outage: { killed: number; dead: number; back: number };
}): void {
  const load = r.calls.filter(
    (c) => !(c.tool === "poll_task" && c.end - c.start > 1_000 && c.error === undefined),
  );
  const ok = r.calls.filter((c) => c.error === undefined);
  const latencies = load.filter((c) => c.error === undefined).map((c) => c.end - c.start);
  print(
    `mixed load, ${r.n} users x (list_models, generate_image wait 0, poll_task, ${100 / UPLOAD_EVERY}% upload_asset, list_models, poll_task wait 30), ${WIDTH} at once`,
  );
  print(
    `    ${r.calls.length} calls in ${r.elapsed.toFixed(1)} s: ${(ok.length / r.elapsed).toFixed(0)} calls/s; p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))} (the final waiting polls left out)`,
  );
  const { killed, dead, back } = r.outage;
  print(
    `    replica ${r.victim + 1} SIGKILLed at ${(killed / 1000).toFixed(1)} s, listening again at ${(back / 1000).toFixed(1)} s`,
  );
  const failed = r.calls.filter((c) => c.error !== undefined);
  // In flight at the replica: sent before its process was gone (its listening socket still took
  // connections until the exit) and still unanswered when the SIGKILL went out.
  const inFlight = failed.filter((c) => c.start <= dead && c.end >= killed);
  print(
    `    failed calls in flight at the killed replica (sent before its exit at ${(dead / 1000).toFixed(1)} s, unanswered at the kill): ${inFlight.length}`,
  );
  goal("failed calls beyond those", failed.length - inFlight.length);
  for (const f of failed.filter((c) => !inFlight.includes(c)).slice(0, 8)) {
    const at = (t: number) => ((t - killed) / 1000).toFixed(1);
    print(`      ${at(f.start)} s to ${at(f.end)} s from the kill, ${f.tool}: ${f.error?.slice(0, 140)}`);
  }
}

async function main(): Promise<void> {
  const d = await startScaleDeployment(Math.max(...PHASES));
  print(
    `three --auth oauth replicas on PostgreSQL behind HAProxy (docs/oauth.md's file, health check on); sandbox at ${d.sandboxUrl}`,
  );
  try {
    const users: User[] = [];
    for (const [i, n] of PHASES.entries()) await phase(d, users, n, i % 3);
  } finally {
    await d.stop();
  }
  process.exit(missed > 0 ? 1 : 0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
