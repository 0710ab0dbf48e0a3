/**
 * (e), (f) and (h) of `npm run bench`: what `--auth oauth` costs the server, against key mode in the
 * same run, on a sandbox of its own (bench/keyed-sandbox.ts, in its own process) holding one key per
 * user, so every signed-in user is a key of their own, as on a real deployment:
 *  (e) the sign-in flow's server time, step by step, over raw HTTP as a browser drives it
 *      (test/helpers/sign-in-direct.ts), so only server time is counted;
 *  (f) SESSIONS users, each a session of their own calling list_models CALLS times, all at once:
 *      throughput and p50/p99, signed in (access tokens) against key mode (each user's key as
 *      Bearer), alternated twice; then one session alone, the check's own cost;
 *  (h) resident memory per idle signed-in user: IDLE_USERS users sign in, each opens a session and
 *      calls list_models, then idles; the server's RSS after a full collection (forced through its
 *      inspector, bench/memory-probe.ts) against before them, per user; key mode alongside, and
 *      what stays per user once the sessions are closed. BENCH_HEAP_SNAPSHOT=DIR writes the
 *      signed-in server's heap snapshot there.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { initializeRequest, type Started, startHttpCli } from "../test/helpers/cli.js";
import { inParallel, registerClient, signInDirect } from "../test/helpers/sign-in-direct.js";
import { freePort } from "../test/ledger/stores.js";
import { inspect, rssOf } from "./memory-probe.js";

const SIGN_INS = Number(process.env.BENCH_SIGN_INS ?? 20);
const IDLE_USERS = Number(process.env.BENCH_IDLE_USERS ?? 1_000);
const THROUGHPUT_GOAL = 0.9;
const P99_GOAL = 1.2;
const IDLE_GOAL_KIB = 128;
const SECRET = Buffer.alloc(32, 3).toString("base64");
const KEYED_SANDBOX = fileURLToPath(new URL("./keyed-sandbox.ts", import.meta.url));

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const print = (line: string) => process.stdout.write(`${line}\n`);
const met = (ok: boolean) => (ok ? "met" : "NOT met");

/** The keyed sandbox, started; its URL and keys. */
async function keyedSandbox(count: number): Promise<{ url: string; keys: string[]; stop(): void }> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [
    "--import",
    "tsx",
    KEYED_SANDBOX,
    String(count),
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
  return { ...started, stop: () => child.stdin.end() };
}

/** An OAuth server on a port of its own (its issuer is its loopback URL). */
async function oauthServer(env: Record<string, string>): Promise<{ cli: Started; issuer: string }> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const cli = await startHttpCli(["--auth", "oauth", "--port", String(port)], {
    ...env,
    GENERATION_PUBLIC_URL: issuer,
    GENERATION_AUTH_SECRET: SECRET,
  });
  return { cli, issuer };
}

/** Each bearer a session of its own calling list_models `calls` times, all at once; latencies and wall time. */
async function load(
  url: string,
  bearers: string[],
  calls: number,
): Promise<{ latencies: number[]; ms: number }> {
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
  // Ended (DELETE), not only dropped: the next round opens as many sessions under the same keys.
  await Promise.all(transports.map((t) => t.terminateSession()));
  await Promise.all(clients.map((c) => c.close()));
  return { latencies, ms: elapsed };
}

/** (e) and (f). */
async function signedInLoad(env: Record<string, string>, keys: string[], sessions: number, calls: number) {
  const { cli: oauth, issuer } = await oauthServer(env);
  const key = await startHttpCli([], env);
  try {
    const clientId = await registerClient(issuer);
    const totals: number[] = [];
    const perStep: Record<string, number[]> = {};
    const tokens: string[] = [];
    for (let i = 0; i < Math.max(SIGN_INS, sessions); i++) {
      const { access, steps } = await signInDirect(issuer, clientId, keys[i] as string);
      tokens.push(access);
      if (i >= SIGN_INS) continue;
      totals.push(Object.values(steps).reduce((a, b) => a + b, 0));
      for (const [step, t] of Object.entries(steps)) perStep[step] = [...(perStep[step] ?? []), t];
    }
    print(`(e) the OAuth sign-in flow's server time, ${SIGN_INS} sign-ins over loopback HTTP (no browser)`);
    print(`    whole flow p50 ${ms(percentile(totals, 50))}, p99 ${ms(percentile(totals, 99))}`);
    const steps = Object.entries(perStep).map(([step, xs]) => `${step} ${ms(percentile(xs, 50))}`);
    print(`    per step (p50): ${steps.join(", ")}`);
    // Alternate the two modes so neither gets a warmer machine.
    const keyed = { latencies: [] as number[], ms: 0 };
    const tokened = { latencies: [] as number[], ms: 0 };
    for (let round = 0; round < 2; round++) {
      for (const [into, url, bearers] of [
        [keyed, key.url, keys.slice(0, sessions)],
        [tokened, oauth.url, tokens.slice(0, sessions)],
      ] as const) {
        const r = await load(url, [...bearers], calls);
        into.latencies.push(...r.latencies);
        into.ms += r.ms;
      }
    }
    const rate = (r: typeof keyed) => r.latencies.length / (r.ms / 1000);
    const line = (label: string, r: typeof keyed) =>
      `    ${label} ${rate(r).toFixed(0)} calls/s, p50 ${ms(percentile(r.latencies, 50))}, p99 ${ms(percentile(r.latencies, 99))}`;
    print(`(f) ${sessions} users, a session each, x ${calls} list_models calls, all at once, twice per mode`);
    print(line("--auth key   (each user's key as Bearer):", keyed));
    print(line("--auth oauth (each user signed in):      ", tokened));
    const throughput = rate(tokened) / rate(keyed);
    const p99 = percentile(tokened.latencies, 99) / percentile(keyed.latencies, 99);
    print(
      `    oauth / key: throughput ${throughput.toFixed(2)}x (goal >= ${THROUGHPUT_GOAL}: ${met(throughput >= THROUGHPUT_GOAL)}), p99 ${p99.toFixed(2)}x (goal <= ${P99_GOAL}: ${met(p99 <= P99_GOAL)})`,
    );
    // One session alone: the token check's own cost (reads of the store), without queueing.
    const soloKey = await load(key.url, keys.slice(0, 1), 200);
    const soloToken = await load(oauth.url, tokens.slice(0, 1), 200);
    print(
      `    one session alone: key p50 ${ms(percentile(soloKey.latencies, 50))}, oauth p50 ${ms(percentile(soloToken.latencies, 50))}`,
    );
  } finally {
    await Promise.all([oauth.stop(), key.stop()]);
  }
}

/** A user's session opened and used once over raw HTTP (2025-11-25), then left idle; its ID. */
async function openIdleSession(url: string, bearer: string): Promise<string> {
  const headers = {
    authorization: `Bearer ${bearer}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const post = async (body: object, session?: string) => {
    const res = await fetch(url, {
      method: "POST",
      headers:
        session === undefined
          ? headers
          : { ...headers, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200 && res.status !== 202)
      throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
    return { session: res.headers.get("mcp-session-id"), text };
  };
  const session = (await post(initializeRequest("bench-idle"))).session ?? "";
  await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
  const called = await post(
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_models", arguments: {} } },
    session,
  );
  if (called.text.includes('"isError":true')) throw new Error("list_models failed");
  return session;
}

interface IdleCost {
  /** Per user, after a full collection, sessions open. */
  idle: number;
  /** Per user, without forcing a collection. */
  raw: number;
  /** Per user, after a full collection, once every session was closed. */
  closed: number;
  heap: number;
}

/** (h) for one mode: `bearerOf(i)` gives user i's bearer (signing them in, for OAuth). */
async function idleCost(
  url: string,
  cli: Started,
  users: number,
  bearerOf: (i: number) => Promise<string>,
  snapshot?: string,
): Promise<IdleCost> {
  const probe = await inspect(cli.stderr());
  const pid = cli.child.pid as number;
  try {
    // The first user warms every code path; the baseline is taken after them.
    const first = await openIdleSession(url, await bearerOf(0));
    await probe.collect();
    const [rss0, heap0] = [rssOf(pid), await probe.heapUsed()];
    const rest = Array.from({ length: users - 1 }, (_, i) => i + 1);
    const sessions = await inParallel(rest, 16, async (i) => ({ bearer: await bearerOf(i), i }));
    const ids = await inParallel(sessions, 16, async ({ bearer }) => ({
      bearer,
      id: await openIdleSession(url, bearer),
    }));
    await new Promise((r) => setTimeout(r, 2_000));
    const raw = rssOf(pid);
    await probe.collect();
    const [rss1, heap1] = [rssOf(pid), await probe.heapUsed()];
    if (snapshot !== undefined) await probe.snapshot(snapshot);
    await inParallel([...ids, { bearer: await bearerOf(0), id: first }], 16, ({ bearer, id }) =>
      fetch(url, {
        method: "DELETE",
        headers: { authorization: `Bearer ${bearer}`, "mcp-session-id": id },
      }).then((r) => r.text()),
    );
    await probe.collect();
    const rss2 = rssOf(pid);
    const per = (bytes: number) => bytes / (users - 1);
    return {
      idle: per(rss1 - rss0),
      raw: per(raw - rss0),
      closed: per(rss2 - rss0),
      heap: per(heap1 - heap0),
    };
  } finally {
    probe.close();
  }
}

/** (h): IDLE_USERS users, signed in and idle, against the same users with their keys as Bearer. */
async function idleMemory(env: Record<string, string>, keys: string[]): Promise<void> {
  // The stores live in memory where they can: a thousand sign-ins make ten thousand durable
  // commits, whose fsyncs take minutes on a disk and change nothing measured here.
  const dir = existsSync("/dev/shm") ? mkdtempSync("/dev/shm/generation-mcp-bench-") : undefined;
  const store = (name: string) =>
    dir === undefined ? {} : { GENERATION_STORE: `sqlite://${join(dir, name)}` };
  const inspected = { ...env, NODE_OPTIONS: "--inspect=127.0.0.1:0" };
  const users = Math.min(IDLE_USERS, keys.length);
  try {
    const { cli, issuer } = await oauthServer({ ...inspected, ...store("oauth.sqlite") });
    let signedIn: IdleCost;
    try {
      const clientId = await registerClient(issuer);
      const snapshot = process.env.BENCH_HEAP_SNAPSHOT;
      const tokens = new Map<number, string>();
      const bearerOf = async (i: number) => {
        const known = tokens.get(i);
        if (known !== undefined) return known;
        const { access } = await signInDirect(issuer, clientId, keys[i] as string);
        tokens.set(i, access);
        return access;
      };
      signedIn = await idleCost(
        cli.url,
        cli,
        users,
        bearerOf,
        snapshot && join(snapshot, "oauth-idle.heapsnapshot"),
      );
    } finally {
      await cli.stop();
    }
    const keyCli = await startHttpCli([], { ...inspected, ...store("key.sqlite") });
    let keyed: IdleCost;
    try {
      keyed = await idleCost(keyCli.url, keyCli, users, async (i) => keys[i] as string);
    } finally {
      await keyCli.stop();
    }
    print(
      `(h) resident memory per idle user, ${users} users, each a session opened and list_models called, then idle`,
    );
    const line = (label: string, c: IdleCost) =>
      `    ${label} ${kib(c.idle)} RSS (${kib(c.heap)} of it JS heap) after a full collection; ${kib(c.raw)} RSS without one; ${kib(c.closed)} once their sessions are closed`;
    print(line("--auth oauth, signed in: ", signedIn));
    print(line("--auth key, Bearer key:  ", keyed));
    print(
      `    signed-in user, idle: goal <= ${IDLE_GOAL_KIB} KiB: ${met(signedIn.idle <= IDLE_GOAL_KIB * 1024)}`,
    );
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
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
    if (parts.includes("h")) await idleMemory(withService, keys.keys);
  } finally {
    keys.stop();
  }
}
