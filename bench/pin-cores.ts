/**
 * Where bench/hostile.ts's processes run. On a real deployment the attacker and the users are on
 * other machines than the server; on this 2-core machine they would otherwise take the server's
 * own core (the server got 45 to 77% of a core under attack, unpinned). So, unless
 * BENCH_HOSTILE_PIN=0: the server under test alone on core 0; the users (this process), the keyed
 * sandbox and the attacker on core 1, the attacker at a lower priority (`nice`) so the users' own
 * clients are not starved by it. `taskset` is util-linux's; without it, or on one core, nothing
 * is pinned and the report says so.
 */
import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";

const ATTACKER_NICE = 10;

function hasTaskset(): boolean {
  try {
    execFileSync("taskset", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Whether the processes are pinned: asked for (the default), `taskset` present, 2 cores or more. */
export const pinned: boolean =
  process.env.BENCH_HOSTILE_PIN !== "0" && availableParallelism() >= 2 && hasTaskset();

const SERVER_CORE = 0;
const CLIENT_CORE = 1;

/** Every thread of `pid` onto `core`. */
const pin = (pid: number, core: number) =>
  execFileSync("taskset", ["-a", "-pc", String(core), String(pid)], { stdio: "ignore" });

/** The command and arguments that start the attacker: on the clients' core, niced, when pinned. */
export function attackerCommand(args: string[]): [string, string[]] {
  if (!pinned) return [process.execPath, args];
  return [
    "taskset",
    ["-c", String(CLIENT_CORE), "nice", "-n", String(ATTACKER_NICE), process.execPath, ...args],
  ];
}

/** The server onto its core and the clients' processes onto theirs, when pinned; how, for the report. */
export function place(server: number, clients: number[]): string {
  if (!pinned)
    return "unpinned: server, users, sandbox and attacker share every core (BENCH_HOSTILE_PIN=0, or no taskset)";
  pin(server, SERVER_CORE);
  for (const pid of clients) pin(pid, CLIENT_CORE);
  return `pinned: server on core ${SERVER_CORE}; users, sandbox and attacker (nice ${ATTACKER_NICE}) on core ${CLIENT_CORE}`;
}
