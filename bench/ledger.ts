/**
 * `npm run bench:ledger`: what durability costs.
 *
 * 1. A durable claim: `run()` from the call until `send` is invoked (claim transaction plus the
 *    durable `sent` mark, each one fsync'd SQLite commit), on a temp file, N=500 distinct bodies.
 *    The claim transaction alone is timed too, on node:sqlite (the only SQLite driver), in rounds.
 * 2. A media submission through the ledger against the bare ServiceClient.submitMedia, to the
 *    local sandbox over loopback HTTP, as a ratio of medians. Aims: claim ~2 ms median, ratio <= 1.5.
 * 3. The shared stores (bench/ledger-shared.ts; BENCH_SHARED=0 leaves them out): claim latency on
 *    SQLite, PostgreSQL and Redis, claims/s from 1, 3 and 8 processes on PostgreSQL, and HTTP
 *    through HAProxy to three replicas against one replica.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildMediaBody } from "../src/client/requests.js";
import { ServiceClient } from "../src/client/service-client.js";
import { bodyHash, newIdentity } from "../src/ledger/identity.js";
import { hashKey, openLedger } from "../src/ledger/open-ledger.js";
import type { StoredRecord } from "../src/ledger/record.js";
import { SqliteStore } from "../src/ledger/stores/sqlite.js";
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
interface Samples {
  claim: number[];
  toSend: number[];
}
const ROUNDS = 10;

/** `n` durable claims: `run()` until send, then the claim transaction alone. */
async function claimSamples(dir: string, n: number, round: number, into: Samples): Promise<void> {
  const ledger = await openLedger({ storeUri: `sqlite://${join(dir, "claims.sqlite")}` });
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

  const store = await SqliteStore.open(`sqlite://${join(dir, "raw-claims.sqlite")}`);
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

/** The claim's cost on this Node, in rounds (an fsync's latency drifts within minutes). */
async function claimCosts(dir: string): Promise<void> {
  const x: Samples = { claim: [], toSend: [] };
  const per = Math.ceil(N_CLAIM / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) await claimSamples(dir, per, round, x);
  const cell = (s: Stats) => `median ${s.median.toFixed(3)}, p99 ${s.p99.toFixed(3)} ms`;
  print(`durable claim (N=${per * ROUNDS}), node:sqlite on Node ${process.versions.node}`);
  print(`  transaction alone                 ${cell(stats(x.claim))}`);
  print(`  run() until send (sent queued)    ${cell(stats(x.toSend))}`);
}

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
  print(`ledger benchmark: SQLite WAL, synchronous=FULL, files in ${dir}`);
  await claimCosts(dir);
  await submissionOverhead(dir);
  if (process.env.BENCH_SHARED !== "0") {
    const { sharedStores } = await import("./ledger-shared.js");
    await sharedStores();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
