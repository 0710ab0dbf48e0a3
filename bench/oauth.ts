/**
 * (e), (f) and (k) of `npm run bench`: what `--auth oauth` costs the server, against key mode in the
 * same run, on a sandbox of its own (bench/keyed-sandbox.ts, in its own process) holding one key per
 * user, so every signed-in user is a key of their own, as on a real deployment:
 *  (e) the sign-in flow's server time, step by step, over raw HTTP as a browser drives it
 *      (test/helpers/sign-in-direct.ts), so only server time is counted;
 *  (f) SESSIONS users, each a session of their own calling list_models CALLS times, all at once:
 *      throughput and p50/p99, signed in (access tokens) against key mode (each user's key as
 *      Bearer), alternated ROUNDS times, and the server's CPU time per call (which the machine's
 *      other load does not change); then one session alone, the check's own cost;
 *  (k) resident memory per idle signed-in user at IDLE_USERS users (bench/oauth-idle.ts).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Agent, setGlobalDispatcher } from "undici";
import { type Started, startHttpCli } from "../test/helpers/cli.js";
import { FORWARDED_ENV, registerClient, signInDirect, userAddress } from "../test/helpers/sign-in-direct.js";
import { freePort } from "../test/ledger/stores.js";
import { cpuMsOf } from "./memory-probe.js";
import { idleMemory } from "./oauth-idle.js";

const SIGN_INS = Number(process.env.BENCH_SIGN_INS ?? 20);
const ROUNDS = Number(process.env.BENCH_OAUTH_ROUNDS ?? 5);
const IDLE_USERS = Number(process.env.BENCH_IDLE_USERS ?? 1_000);
const THROUGHPUT_GOAL = 0.9;
const P99_GOAL = 1.2;
const SECRET = Buffer.alloc(32, 3).toString("base64");
const KEYED_SANDBOX = fileURLToPath(new URL("./keyed-sandbox.ts", import.meta.url));

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;
const print = (line: string) => process.stdout.write(`${line}\n`);
const met = (ok: boolean) => (ok ? "met" : "NOT met");

/** The keyed sandbox, started; its URL and keys. */
export async function keyedSandbox(
  count: number,
  timeScale = 50,
): Promise<{ url: string; keys: string[]; pid: number; stop(): void }> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [
    "--import",
    "tsx",
    KEYED_SANDBOX,
    String(count),
    String(timeScale),
  ]);
  let out = "";
  const started = await new Promise<{ url: string; keys: string[] }>((resolve, reject) => {
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("\n"))
        resolve(JSON.parse(out.split("\n")[0] ?? "") as { url: string; keys: string[] });
    });
    child.once("exit", (code) => reject(new Error(`the keyed sandbox exited with ${code}`)));
  });
  return { ...started, pid: child.pid as number, stop: () => child.stdin.end() };
}

/** An OAuth server on a port of its own (its issuer is its loopback URL). */
export async function oauthServer(env: Record<string, string>): Promise<{ cli: Started; issuer: string }> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const cli = await startHttpCli(["--auth", "oauth", "--port", String(port)], {
    ...env,
    GENERATION_PUBLIC_URL: issuer,
    GENERATION_AUTH_SECRET: SECRET,
    // Users sign in from addresses of their own (userAddress), as a trusted front forwards them.
    ...FORWARDED_ENV,
  });
  return { cli, issuer };
}

interface Load {
  latencies: number[];
  /** Wall time, ms. */
  ms: number;
  /** The server's CPU time, ms. */
  cpu: number;
}

/**
 * The bench's own connections give up an idle socket after 0.5 s, well before the server's 5 s
 * keep-alive ends it (with a thousand clients on a loaded machine the client's timer can fire
 * late, and a request sent on a socket the server is closing fails: "other side closed"); a
 * connection may wait long to be accepted there, so connecting gets 60 s, not 10.
 */
setGlobalDispatcher(
  new Agent({ keepAliveTimeout: 500, keepAliveMaxTimeout: 500, connect: { timeout: 60_000 } }),
);

/** Each bearer a session of its own calling list_models `calls` times, all at once, on `server`. */
async function load(server: Started, bearers: string[], calls: number): Promise<Load> {
  const url = server.url;
  const transports: StreamableHTTPClientTransport[] = [];
  const clients = await Promise.all(
    bearers.map(async (bearer) => {
      const c = new Client({ name: "bench", version: "1.0.0" });
      const requestInit = { headers: { authorization: `Bearer ${bearer}` } };
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });
      transports.push(transport);
      await c.connect(transport);
      return c;
    }),
  );
  await Promise.all(clients.map((c) => c.callTool({ name: "list_models", arguments: {} })));
  const latencies: number[] = [];
  const pid = server.child.pid as number;
  const cpu = cpuMsOf(pid);
  const started = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      for (let i = 0; i < calls; i++) {
        const t = performance.now();
        const r = await c.callTool({ name: "list_models", arguments: {} });
        if (r.isError) throw new Error("list_models failed");
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = performance.now() - started;
  const used = cpuMsOf(pid) - cpu;
  // Ended (DELETE), not only dropped: the next round opens as many sessions under the same keys.
  await Promise.all(transports.map((t) => t.terminateSession()));
  await Promise.all(clients.map((c) => c.close()));
  return { latencies, ms: elapsed, cpu: used };
}

/** (e) and (f). */
async function signedInLoad(base: Record<string, string>, keys: string[], sessions: number, calls: number) {
  // BENCH_CPU_PROF=DIR: both servers write a CPU profile there when they stop (node --cpu-prof);
  // BENCH_SERVER_NODE_OPTIONS: Node options for both (e.g. --experimental-async-context-frame on Node 22).
  const prof = process.env.BENCH_CPU_PROF;
  const options = [
    process.env.BENCH_SERVER_NODE_OPTIONS ?? "",
    prof === undefined ? "" : `--cpu-prof --cpu-prof-dir=${prof}`,
  ].join(" ");
  // Both servers let the bench's one address hold a thousand connections (the default share is
  // 256, http-connections.ts) and keep idle ones 60 s: on a loaded machine the bench's 0.5 s
  // idle timer can fire seconds late, after a 5 s keep-alive ended the socket ("other side closed").
  const limits = { GENERATION_HTTP_LIMITS: "connectionsPerAddress=8000,keepAliveTimeoutS=60" };
  const env = { ...base, ...limits, ...(options.trim() === "" ? {} : { NODE_OPTIONS: options.trim() }) };
  const { cli: oauth, issuer } = await oauthServer(env);
  const key = await startHttpCli([], env);
  try {
    const clientId = await registerClient(issuer);
    const totals: number[] = [];
    const perStep: Record<string, number[]> = {};
    const tokens: string[] = [];
    for (let i = 0; i < Math.max(SIGN_INS, sessions); i++) {
      const { access, steps } = await signInDirect(issuer, clientId, keys[i] as string, {
        from: userAddress(i),
      });
      tokens.push(access);
      if (i >= SIGN_INS) continue;
      totals.push(Object.values(steps).reduce((a, b) => a + b, 0));
      for (const [step, t] of Object.entries(steps)) perStep[step] = [...(perStep[step] ?? []), t];
    }
    print(`(e) the OAuth sign-in flow's server time, ${SIGN_INS} sign-ins over loopback HTTP (no browser)`);
    print(`    whole flow p50 ${ms(percentile(totals, 50))}, p99 ${ms(percentile(totals, 99))}`);
    const steps = Object.entries(perStep).map(([step, xs]) => `${step} ${ms(percentile(xs, 50))}`);
    print(`    per step (p50): ${steps.join(", ")}`);
    // Alternate the two modes so neither gets a warmer machine; each round a pair, side by side in time.
    const keyed: Load[] = [];
    const tokened: Load[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      keyed.push(await load(key, keys.slice(0, sessions), calls));
      tokened.push(await load(oauth, tokens.slice(0, sessions), calls));
    }
    const rate = (r: Load) => r.latencies.length / (r.ms / 1000);
    const p99 = (r: Load) => percentile(r.latencies, 99);
    const pooled = (rs: Load[]): Load => ({
      latencies: rs.flatMap((r) => r.latencies),
      ms: rs.reduce((a, r) => a + r.ms, 0),
      cpu: rs.reduce((a, r) => a + r.cpu, 0),
    });
    const line = (label: string, r: Load) =>
      `    ${label} ${rate(r).toFixed(0)} calls/s, p50 ${ms(percentile(r.latencies, 50))}, p99 ${ms(p99(r))}; server CPU ${(r.cpu / r.latencies.length).toFixed(2)} ms per call`;
    print(
      `(f) ${sessions} users, a session each, x ${calls} list_models calls, all at once; ${ROUNDS} rounds per mode, alternated`,
    );
    print(line("--auth key   (each user's key as Bearer):", pooled(keyed)));
    print(line("--auth oauth (each user signed in):      ", pooled(tokened)));
    // The median over rounds of each pair's ratio: a burst of the machine's other load spoils one pair, not the figure.
    const ratio = (f: (r: Load) => number) =>
      percentile(
        keyed.map((k, i) => f(tokened[i] as Load) / f(k)),
        50,
      );
    const throughput = ratio(rate);
    const tail = ratio(p99);
    print(
      `    oauth / key, median of the rounds' ratios: throughput ${throughput.toFixed(2)}x (goal >= ${THROUGHPUT_GOAL}: ${met(throughput >= THROUGHPUT_GOAL)}), p99 ${tail.toFixed(2)}x (goal <= ${P99_GOAL}: ${met(tail <= P99_GOAL)})`,
    );
    // One session alone: the token check's own cost (reads of the store), without queueing.
    const soloKey = await load(key, keys.slice(0, 1), 200);
    const soloToken = await load(oauth, tokens.slice(0, 1), 200);
    print(
      `    one session alone: key p50 ${ms(percentile(soloKey.latencies, 50))}, oauth p50 ${ms(percentile(soloToken.latencies, 50))}`,
    );
  } catch (error) {
    // What the servers said, when a run fails: the cause is usually there.
    for (const [name, s] of [
      ["oauth", oauth],
      ["key", key],
    ] as const)
      print(
        `    ${name} server (exit ${s.child.exitCode}) stderr: ${s.stderr().trim().split("\n").slice(-5).join(" | ")}`,
      );
    throw error;
  } finally {
    await Promise.all([oauth.stop(), key.stop()]);
  }
}

export async function oauthCosts(
  env: Record<string, string>,
  parts: string,
  sessions: number,
  calls: number,
): Promise<void> {
  const keys = await keyedSandbox(Math.max(IDLE_USERS, sessions, SIGN_INS));
  const withService = { ...env, GENERATION_BASE_URL: keys.url };
  try {
    if (parts.includes("e") || parts.includes("f"))
      await signedInLoad(withService, keys.keys, sessions, calls);
    if (parts.includes("k")) await idleMemory(withService, keys.keys.slice(0, IDLE_USERS), oauthServer);
  } finally {
    keys.stop();
  }
}
