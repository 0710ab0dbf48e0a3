/**
 * `npm run bench:ledger`: what durability costs.
 *
 * 1. A durable claim: `run()` from the call until `send` is invoked (claim transaction plus the
 *    durable `sent` mark, each one fsync'd SQLite commit), on a temp file, N=500 distinct bodies.
 *    The claim transaction alone is timed too. Both SQLite drivers side by side, in alternating
 *    rounds in one process: this one when its Node has node:sqlite, else this file run again
 *    under the Node 24 that scripts/packaged.ts keeps in .tmp/tools (BENCH_CLAIMS_ONLY=1).
 * 2. A media submission through the ledger against the bare ServiceClient.submitMedia, to the
 *    local sandbox over loopback HTTP, as a ratio of medians. Aims: claim ~2 ms median, ratio <= 1.5.
 * 3. The shared stores (bench/ledger-shared.ts; BENCH_SHARED=0 leaves them out): claim latency on
 *    SQLite, PostgreSQL and Redis, claims/s from 1, 3 and 8 processes on PostgreSQL, and HTTP
 *    through HAProxy to three replicas against one replica.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { node24, ROOT } from "../scripts/packaged.js";
import { buildMediaBody } from "../src/client/requests.js";
import { ServiceClient } from "../src/client/service-client.js";
import { loadNodeSqlite } from "../src/ledger/drivers.js";
import { bodyHash, newIdentity } from "../src/ledger/identity.js";
import { hashKey, openLedger } from "../src/ledger/open-ledger.js";
import type { StoredRecord } from "../src/ledger/record.js";
import { SqliteStore } from "../src/ledger/sqlite.js";
import { createSandbox, SANDBOX_API_KEY } from "../src/sandbox/sandbox.js";

const N_CLAIM = Number(process.env.BENCH_CLAIMS ?? 500);
const N_SUBMIT = Number(process.env.BENCH_SUBMISSIONS ?? 300);
const keyHash = hashKey(SANDBOX_API_KEY);
const print = (line: string) => process.stdout.write(`${line}\n`);

function stats(ms: number[]): { median: number; p99: number; mean: number } {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
  return { median: at(0.5), p99: at(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}
const fmt = (x: { median: number; p99: number; mean: number }) =>
  `median ${x.median.toFixed(3)} ms, p99 ${x.p99.toFixed(3)} ms, mean ${x.mean.toFixed(3)} ms`;

type Stats = ReturnType<typeof stats>;
type Driver = "node" | "sqlite3";
interface Samples {
  claim: number[];
  toSend: number[];
}
interface ClaimCost {
  driver: string;
  node: string;
  claim: Stats;
  toSend: Stats;
}
const ROUNDS = 10;

/** `n` durable claims on one driver: `run()` until send, then the claim transaction alone. */
async function claimSamples(
  dir: string,
  driver: Driver,
  n: number,
  round: number,
  into: Samples,
): Promise<void> {
  const ledger = await openLedger({
    storeUri: `sqlite://${join(dir, `claims-${driver}.sqlite`)}?driver=${driver}`,
  });
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const out = await ledger.run(
      {
        keyHash,
        tool: "generate_image",
        endpoint: "/api/generate/image",
        bytes: `{"prompt":"claim ${round}.${i}"}`,
      },
      async () => {
        into.toSend.push(performance.now() - t0);
        return {};
      },
      () => ({}),
    );
    // Untimed: lets the queued success mark land, so the next claim starts on an idle ledger.
    await ledger.markDelivered(keyHash, out.identity, true);
  }
  await ledger.close();

  const store = await SqliteStore.open(
    `sqlite://${join(dir, `raw-claims-${driver}.sqlite`)}?driver=${driver}`,
  );
  for (let i = 0; i < n; i++) {
    const bytes = `{"prompt":"raw ${round}.${i}"}`;
    const now = Date.now();
    const fresh = (identity: string): StoredRecord => ({
      v: 1,
      version: 1,
      identity,
      explicit: false,
      tool: "generate_image",
      endpoint: "/api/generate/image",
      keyHash,
      bytes,
      bodyHash: bodyHash(bytes),
      state: "prepared",
      delivered: false,
      attempts: 0,
      createdAt: now,
      updatedAt: now,
    });
    const t0 = performance.now();
    await store.claim({
      keyHash,
      tool: "generate_image",
      bodyHash: bodyHash(bytes),
      now,
      newIdentity: () => newIdentity(now),
      fresh,
      reusable: () => true,
    });
    into.claim.push(performance.now() - t0);
  }
  await store.close();
}

/**
 * Both drivers in one process, in alternating rounds, so both meet the same disk: an fsync's
 * latency on a shared machine drifts by an order of magnitude within minutes.
 */
async function claimCostsHere(dir: string): Promise<ClaimCost[]> {
  const drivers: Driver[] = ["sqlite3", "node"];
  const samples = new Map(drivers.map((d) => [d, { claim: [], toSend: [] } as Samples]));
  const per = Math.ceil(N_CLAIM / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    for (const d of round % 2 === 0 ? drivers : [...drivers].reverse()) {
      await claimSamples(dir, d, per, round, samples.get(d) as Samples);
    }
  }
  return drivers.map((d) => {
    const x = samples.get(d) as Samples;
    const driver = d === "node" ? "node:sqlite" : "sqlite3";
    return { driver, node: process.versions.node, claim: stats(x.claim), toSend: stats(x.toSend) };
  });
}

/** Here when this Node has node:sqlite, else the same code under the Node 24 in .tmp/tools. */
async function claimCosts(dir: string): Promise<void> {
  let runs: ClaimCost[];
  if (loadNodeSqlite() !== null) runs = await claimCostsHere(dir);
  else {
    const r = spawnSync(node24(), ["--import", "tsx", join(ROOT, "bench", "ledger.ts")], {
      cwd: ROOT,
      env: { ...process.env, BENCH_CLAIMS_ONLY: "1" },
      encoding: "utf8",
    });
    const line = r.stdout.trim().split("\n").pop() ?? "";
    if (r.status !== 0 || !line.startsWith("[")) throw new Error(`the Node 24 run failed: ${r.stderr}`);
    runs = JSON.parse(line) as ClaimCost[];
  }
  const cell = (x: Stats) => `median ${x.median.toFixed(3)}, p99 ${x.p99.toFixed(3)} ms`.padEnd(34);
  print(
    `durable claim (N=${per(N_CLAIM)})            ${runs.map((r) => `${r.driver} (Node ${r.node})`.padEnd(34)).join("")}`,
  );
  print(`  transaction alone                 ${runs.map((r) => cell(r.claim)).join("")}`);
  print(`  run() until send (sent queued)    ${runs.map((r) => cell(r.toSend)).join("")}`);
}
const per = (n: number): number => Math.ceil(n / ROUNDS) * ROUNDS;

async function submissionOverhead(dir: string): Promise<void> {
  const sandbox = createSandbox({ seed: "bench" });
  const server = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  const ledger = await openLedger({ storeUri: `sqlite://${join(dir, "submit.sqlite")}` });
  const client = new ServiceClient({ baseUrl: server.url, apiKey: SANDBOX_API_KEY });
  const submit = async (identity: string, bytes: string): Promise<{ taskId: string }> => {
    const { submission } = await client.submitMedia("image", bytes, identity);
    return { taskId: submission.task.id };
  };
  const body = (i: number, kind: string) =>
    buildMediaBody("image", { model: "sandbox-image-fast", prompt: `${kind} ${i}` }).bytes;
  const bare: number[] = [];
  const through: number[] = [];
  const delivered: number[] = [];
  const beforeSend: number[] = [];
  const inSend: number[] = [];
  // Warm up both paths (JIT, connection pool), then interleave so drift hits both alike.
  for (let i = 0; i < 30; i++) {
    await submit(`warm-${i}`, body(i, "warm"));
    await ledger.run(
      { keyHash, tool: "generate_image", endpoint: "/api/generate/image", bytes: body(i, "warm-l") },
      submit,
      (r) => r,
    );
  }
  for (let i = 0; i < N_SUBMIT; i++) {
    let t0 = performance.now();
    await submit(`bare-${i}`, body(i, "bare"));
    bare.push(performance.now() - t0);
    t0 = performance.now();
    const start = t0;
    const out = await ledger.run(
      { keyHash, tool: "generate_image", endpoint: "/api/generate/image", bytes: body(i, "ledger") },
      async (identity, bytes) => {
        const t1 = performance.now();
        beforeSend.push(t1 - start);
        const r = await submit(identity, bytes);
        inSend.push(performance.now() - t1);
        return r;
      },
      (r) => r,
    );
    through.push(performance.now() - t0);
    await ledger.markDelivered(keyHash, out.identity, true);
    delivered.push(performance.now() - t0);
  }
  await ledger.close();
  await sandbox.close();
  const b = stats(bare);
  const l = stats(through);
  const d = stats(delivered);
  const ratio = (x: typeof b) =>
    `median ${(x.median / b.median).toFixed(2)}, mean ${(x.mean / b.mean).toFixed(2)}`;
  print(`bare submission to the sandbox (N=${N_SUBMIT}):      ${fmt(b)}`);
  print(`ledger.run() submission (N=${N_SUBMIT}):             ${fmt(l)}`);
  print(`  of which before send (claim, queued writes ahead): ${fmt(stats(beforeSend))}`);
  print(`  of which the submission itself:                 ${fmt(stats(inSend))}`);
  print(`ledger.run() + markDelivered (N=${N_SUBMIT}):        ${fmt(d)}`);
  print(`ratio run()/bare: ${ratio(l)} (target <= 1.5)`);
  print(`ratio run()+markDelivered/bare: ${ratio(d)}`);
}

const dir = mkdtempSync(join(tmpdir(), "bench-ledger-"));
try {
  if (process.env.BENCH_CLAIMS_ONLY === "1") {
    print(JSON.stringify(await claimCostsHere(dir)));
  } else {
    print(`ledger benchmark: SQLite WAL, synchronous=FULL, files in ${dir}`);
    await claimCosts(dir);
    await submissionOverhead(dir);
    if (process.env.BENCH_SHARED !== "0") {
      const { sharedStores } = await import("./ledger-shared.js");
      await sharedStores();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
