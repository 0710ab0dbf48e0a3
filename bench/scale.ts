/**
 * `npx tsx bench/scale.ts` (a bench, not a timed test; needs HAProxy and PostgreSQL, run
 * `npm run build` first): the deployment docs/deploying.md documents, on loopback, as
 * test/e2e/balancer.ts starts it (three `--auth oauth` replicas on one fresh PostgreSQL store behind
 * HAProxy, an in-process sandbox), with BENCH_SCALE_USERS (1,000) users signed in through the front,
 * each from an address of their own (a trusted front forwards it). Then a mixed load on the
 * sessionless 2026-07-28 wire, so any replica serves any request: each user calls list_models, and
 * one call in ten is a paid generate_image with wait 0; midway replica 1 is killed (SIGKILL) and
 * restarted on its port. Reports throughput, p50/p99, the calls that failed and when, RSS per
 * signed-in user on each replica, and the store's size.
 */
import { execFileSync } from "node:child_process";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Agent, setGlobalDispatcher } from "undici";
import { startDeployment } from "../test/e2e/balancer.js";
import { startHttpCli } from "../test/helpers/cli.js";
import {
  FORWARDED_ENV,
  inParallel,
  registerClient,
  signInDirect,
  userAddress,
} from "../test/helpers/sign-in-direct.js";
import { freePort } from "../test/ledger/stores.js";
import { rssOf } from "./memory-probe.js";

const USERS = Number(process.env.BENCH_SCALE_USERS ?? 1_000);
const CALLS = Number(process.env.BENCH_SCALE_CALLS ?? 6);
const SECRET = Buffer.alloc(32, 7).toString("base64");
const print = (line: string) => process.stdout.write(`${line}\n`);
const ms = (x: number) => `${x.toFixed(1)} ms`;
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] ?? Number.NaN;

// See bench/oauth.ts: idle sockets dropped before the servers' keep-alive ends them.
setGlobalDispatcher(
  new Agent({ keepAliveTimeout: 500, keepAliveMaxTimeout: 500, connect: { timeout: 60_000 } }),
);

async function main(): Promise<void> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const env = {
    GENERATION_AUTH: "oauth",
    GENERATION_PUBLIC_URL: issuer,
    GENERATION_AUTH_SECRET: SECRET,
    ...FORWARDED_ENV,
  };
  const d = await startDeployment({ env, port });
  try {
    const rss0 = d.replicas.map((r) => rssOf(r.child.pid as number));
    const clientId = await registerClient(issuer);
    const keys = Array.from({ length: USERS }, () => d.sandbox.addKey({ scopes: ["read", "generate"] }));
    let started = performance.now();
    const tokens = await inParallel(
      keys,
      16,
      async (key, i) => (await signInDirect(issuer, clientId, key, { from: userAddress(i) })).access,
    );
    print(
      `${USERS} users signed in through HAProxy in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const clients = await inParallel(tokens, 50, async (token) => {
      const c = new Client(
        { name: "scale", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await c.connect(
        new StreamableHTTPClientTransport(new URL(`${issuer}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return c;
    });
    const latencies: number[] = [];
    const failures: Array<{ at: number; why: string }> = [];
    let killedAt = Number.NaN;
    let restartedAt = Number.NaN;
    const total = USERS * CALLS;
    started = performance.now();
    const outage = (async () => {
      while (latencies.length + failures.length < total / 2) await new Promise((r) => setTimeout(r, 50));
      const victim = d.replicas[1];
      if (victim === undefined) return;
      const victimPort = new URL(victim.url).port;
      killedAt = performance.now() - started;
      victim.child.kill("SIGKILL");
      await new Promise((r) => setTimeout(r, 1_000));
      d.replicas[1] = await startHttpCli(["--port", victimPort], d.replicaEnv(env));
      restartedAt = performance.now() - started;
    })();
    await Promise.all(
      clients.map(async (c, u) => {
        for (let i = 0; i < CALLS; i++) {
          const paid = (u + i) % 10 === 0;
          const t = performance.now();
          try {
            const r = paid
              ? await c.callTool({
                  name: "generate_image",
                  arguments: { model: "sandbox-image-fast", prompt: `scale ${u} ${i}`, wait: 0 },
                })
              : await c.callTool({ name: "list_models", arguments: {} });
            if (r.isError) throw new Error(JSON.stringify(r.content).slice(0, 160));
            latencies.push(performance.now() - t);
          } catch (error) {
            failures.push({ at: t - started, why: (error as Error).message.slice(0, 160) });
          }
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    await outage;
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    print(
      `mixed load: ${USERS} users x ${CALLS} calls (one in ten a paid generate_image, wait 0), 2026-07-28 wire, through HAProxy`,
    );
    print(
      `    throughput ${(latencies.length / elapsed).toFixed(0)} calls/s, p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}`,
    );
    print(
      `    replica 1 killed at ${(killedAt / 1000).toFixed(1)} s, restarted (listening) at ${(restartedAt / 1000).toFixed(1)} s`,
    );
    const during = failures.filter((f) => f.at >= killedAt - 1_000 && f.at <= restartedAt + 1_000);
    print(
      `    failed calls: ${failures.length} of ${total} (${during.length} started within 1 s of the outage)`,
    );
    for (const why of [...new Set(failures.map((f) => f.why))].slice(0, 3)) print(`      e.g. ${why}`);
    const perUser = d.replicas.map(
      (r, i) => (rssOf(r.child.pid as number) - (i === 1 ? 0 : (rss0[i] ?? 0))) / USERS / 1024,
    );
    print(
      `    RSS rise per signed-in user, replicas 0 and 2 (no GC forced): ${perUser[0]?.toFixed(1)} and ${perUser[2]?.toFixed(1)} KiB; replica 1 (restarted) ${perUser[1]?.toFixed(1)} KiB of RSS in all per user`,
    );
    const db = new URL(d.store.uri);
    const sql =
      "SELECT pg_size_pretty(pg_total_relation_size('generation_mcp_ledger')) || ', ' || count(*) || ' rows' FROM generation_mcp_ledger";
    const size = execFileSync(
      "psql",
      [
        "-h",
        db.hostname,
        "-p",
        db.port || "5432",
        "-U",
        db.username || "postgres",
        "-d",
        db.pathname.slice(1) || "postgres",
        "-Atc",
        sql,
      ],
      {
        env: { ...process.env, PGOPTIONS: db.searchParams.get("options") ?? "" },
      },
    )
      .toString()
      .trim();
    print(`    store: the ledger table (grants, tokens, accounts, task records) ${size}, ${USERS} users`);
  } finally {
    await d.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
