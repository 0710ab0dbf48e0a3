/**
 * The shared stores in `npm run bench:ledger`, against real servers on this machine:
 * 1. A durable claim (`run()` from the call until `send` is invoked) on SQLite, PostgreSQL (the
 *    local server, fsync on, synchronous_commit on) and Redis (a redis-server of our own with
 *    appendonly yes, appendfsync always), in alternating rounds so all three meet the same disk.
 * 2. Distinct claims per second from 1, 3 and 8 replica processes on one PostgreSQL ledger, each
 *    process running CLAIMERS_PER_PROCESS claims at a time for THROUGHPUT_MS.
 * 3. HTTP: 100 sessions each making CALLS_PER_SESSION generate_image calls through HAProxy to
 *    three replicas of the built CLI on one PostgreSQL ledger, against one replica alone.
 * A store or tool that is missing skips its part with one line.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { hashKey, type Ledger, openLedger } from "../src/ledger/open-ledger.js";
import { createSandbox, SANDBOX_API_KEY } from "../src/sandbox/sandbox.js";
import { type Balancer, haproxyInstalled, startHaproxy } from "../test/e2e/balancer.js";
import { isolatedEnv, ROOT, type Started, startHttpCli } from "../test/helpers/cli.js";
import {
  available,
  freshStore,
  type StoreFixture,
  type StoreKind,
  startRedis,
} from "../test/ledger/stores.js";

const keyHash = hashKey(SANDBOX_API_KEY);
const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const N_CLAIM = Number(process.env.BENCH_SHARED_CLAIMS ?? 300);
const ROUNDS = 6;
const THROUGHPUT_MS = Number(process.env.BENCH_THROUGHPUT_MS ?? 3_000);
const CLAIMERS_PER_PROCESS = 4;
const SESSIONS = 100;
const CALLS_PER_SESSION = Number(process.env.BENCH_CALLS_PER_SESSION ?? 5);

function stats(ms: number[]): { median: number; p99: number } {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
  return { median: at(0.5), p99: at(0.99) };
}
const cell = (ms: number[]) => {
  const x = stats(ms);
  return `median ${x.median.toFixed(3)}, p99 ${x.p99.toFixed(3)} ms`.padEnd(34);
};

const runReq = (bytes: string) => ({
  keyHash,
  tool: "generate_image",
  endpoint: "/api/generate/image",
  bytes,
});

async function timedClaims(ledger: Ledger, n: number, tag: string, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const out = await ledger.run(
      runReq(`{"prompt":"${tag} ${i}"}`),
      async () => {
        into.push(performance.now() - t0);
        return {};
      },
      () => ({}),
    );
    await ledger.markDelivered(keyHash, out.identity, true);
  }
}

/** 1. Durable claim latency on the three stores side by side. */
async function claimLatency(): Promise<void> {
  const redis = await startRedis().catch(() => undefined);
  const fixtures: Array<{ kind: StoreKind; uri: string; cleanup: () => Promise<void> }> = [];
  for (const kind of ["sqlite", "postgres"] as const) {
    if (await available(kind).catch(() => false)) fixtures.push(await freshStore(kind));
    else print(`(${kind} not reachable: left out)`);
  }
  if (redis !== undefined)
    fixtures.push({ kind: "redis", uri: `redis://127.0.0.1:${redis.port}`, cleanup: redis.stop });
  else print("(redis-server could not start: left out)");
  const ledgers = await Promise.all(fixtures.map((f) => openLedger({ storeUri: f.uri })));
  const samples = fixtures.map(() => [] as number[]);
  const per = Math.ceil(N_CLAIM / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    for (let j = 0; j < ledgers.length; j++) {
      const k = round % 2 === 0 ? j : ledgers.length - 1 - j;
      await timedClaims(ledgers[k] as Ledger, per, `r${round}`, samples[k] as number[]);
    }
  }
  await Promise.all(ledgers.map((l) => l.close()));
  print(`durable claim, run() until send (N=${per * ROUNDS} each)`);
  print(`  ${fixtures.map((f) => f.kind.padEnd(34)).join("")}`);
  print(`  ${samples.map(cell).join("")}`);
  await Promise.all(fixtures.map((f) => f.cleanup()));
}

/** One replica process of part 2: claims for THROUGHPUT_MS, prints how many it made. */
async function claimer(uri: string, tag: string): Promise<void> {
  const ledger = await openLedger({ storeUri: uri });
  process.stdout.write("ready\n");
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  // A stdin left flowing keeps this process alive after its count: the parent could never finish.
  process.stdin.destroy();
  const end = performance.now() + THROUGHPUT_MS;
  let n = 0;
  await Promise.all(
    Array.from({ length: CLAIMERS_PER_PROCESS }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        await ledger.run(
          runReq(`{"prompt":"${tag} ${w}.${i}"}`),
          async () => ({}),
          () => ({}),
        );
        n++;
      }
    }),
  );
  await ledger.close();
  process.stdout.write(`${n}\n`);
}

/** 2. Distinct claims per second from 1, 3 and 8 processes on one PostgreSQL ledger. */
async function throughput(): Promise<void> {
  if (!(await available("postgres").catch(() => false)))
    return print("(postgres not reachable: no throughput curve)");
  print(
    `distinct claims/s on one PostgreSQL ledger (${CLAIMERS_PER_PROCESS} in flight per process, ${THROUGHPUT_MS} ms)`,
  );
  for (const processes of [1, 3, 8]) {
    const store: StoreFixture = await freshStore("postgres");
    const children = Array.from({ length: processes }, (_, p) =>
      spawn(process.execPath, ["--import", "tsx", join(ROOT, "bench", "ledger-shared.ts")], {
        cwd: ROOT,
        env: { ...process.env, BENCH_CLAIMER_URI: store.uri, BENCH_CLAIMER_TAG: `p${processes}.${p}` },
        stdio: ["pipe", "pipe", "inherit"],
      }),
    );
    const lines = children.map((c) => {
      let out = "";
      c.stdout.on("data", (d: Buffer) => {
        out += d.toString();
      });
      return (pattern: RegExp) =>
        new Promise<string>((resolve, reject) => {
          const check = () => {
            const m = pattern.exec(out);
            if (m !== null) resolve(m[0]);
          };
          c.stdout.on("data", check);
          c.once("exit", () => (pattern.test(out) ? check() : reject(new Error("claimer exited"))));
          check();
        });
    });
    const exited = children.map(
      (c) =>
        new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : c.once("exit", () => resolve()))),
    );
    await Promise.all(lines.map((l) => l(/ready/)));
    // "go", then end of input: a claimer has nothing more to wait for once it has counted.
    for (const c of children) c.stdin.end("go\n");
    const counts = await Promise.all(lines.map((l) => l(/^\d+$/m)));
    await Promise.all(exited);
    const total = counts.reduce((a, b) => a + Number(b), 0);
    print(
      `  ${String(processes).padStart(2)} process${processes === 1 ? " " : "es"}: ${(total / (THROUGHPUT_MS / 1000)).toFixed(0)} claims/s`,
    );
    await store.cleanup();
  }
}

interface Session {
  client: Client;
  /** Ends the session on the server (DELETE), then closes the client. */
  end(): Promise<void>;
}

/** `via`: the fetch of the balancer's TLS front (test/e2e/balancer.ts); default the global one. */
async function session(url: string, key: string, via?: Balancer["fetch"]): Promise<Session> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    ...(via === undefined ? {} : { fetch: via }),
  });
  await client.connect(transport);
  // close() alone leaves the session open on the server, which caps open sessions per key: the
  // next run's sessions would be refused.
  return { client, end: () => transport.terminateSession().then(() => client.close()) };
}

/** 100 sessions, each CALLS_PER_SESSION distinct generate_image calls in a row, all sessions at once. */
async function load(
  url: string,
  key: string,
  tag: string,
  via?: Balancer["fetch"],
): Promise<{ perSecond: number; latency: number[] }> {
  const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => session(url, key, via)));
  const latency: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    sessions.map(async ({ client: c }, s) => {
      for (let i = 0; i < CALLS_PER_SESSION; i++) {
        const t = performance.now();
        const out = await c.callTool({
          name: "generate_image",
          arguments: { model: "sandbox-image-fast", prompt: `${tag} ${s}.${i}`, wait: 0 },
        });
        if (out.isError) throw new Error(JSON.stringify(out.content));
        latency.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(sessions.map((s) => s.end()));
  return { perSecond: latency.length / seconds, latency };
}

/** 3. HTTP through the balancer to three replicas, against one replica alone. */
async function http(): Promise<void> {
  if (!haproxyInstalled()) return print("(haproxy not installed: no HTTP comparison)");
  if (!(await available("postgres").catch(() => false)))
    return print("(postgres not reachable: no HTTP comparison)");
  const sandbox = createSandbox({ timeScale: 50 });
  const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  const key = sandbox.addKey({ scopes: ["read", "generate"], capGems: 10_000_000, balanceGems: 100_000_000 });
  const store = await freshStore("postgres");
  const envs = [0, 1, 2].map(() =>
    isolatedEnv({ GENERATION_BASE_URL: listening.url, GENERATION_STORE: store.uri }),
  );
  const replicas: Started[] = await Promise.all(envs.map((e) => startHttpCli([], e.env)));
  const balancer = await startHaproxy(replicas.map((r) => new URL(r.url).host));
  try {
    // Warm every replica (JIT, connection pools) before either timed run.
    await load(balancer.url, key, "warm", balancer.fetch);
    const one = await load(replicas[0]?.url ?? "", key, "one");
    const three = await load(balancer.url, key, "three", balancer.fetch);
    print(`HTTP: ${SESSIONS} sessions × ${CALLS_PER_SESSION} generate_image calls, PostgreSQL ledger`);
    print(
      `  one replica, direct         ${one.perSecond.toFixed(0).padStart(5)} calls/s, ${cell(one.latency)}`,
    );
    print(
      `  3 replicas behind HAProxy   ${three.perSecond.toFixed(0).padStart(5)} calls/s, ${cell(three.latency)}`,
    );
  } finally {
    await balancer.stop();
    await Promise.all(replicas.map((r) => r.stop()));
    await listening.close();
    await sandbox.close();
    await store.cleanup();
    for (const e of envs) e.cleanup();
  }
}

export async function sharedStores(): Promise<void> {
  await claimLatency();
  await throughput();
  await http();
}

if (process.env.BENCH_CLAIMER_URI !== undefined) {
  await claimer(process.env.BENCH_CLAIMER_URI, process.env.BENCH_CLAIMER_TAG ?? "c");
} else if (process.argv[1]?.endsWith("ledger-shared.ts")) {
  await sharedStores();
  process.exit(0);
}
