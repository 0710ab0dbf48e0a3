/**
 * (k) of `npm run bench`: resident memory per idle signed-in user. IDLE_USERS users sign in (each a
 * key of their own), each opens a session and calls list_models, then idles; the server's RSS after
 * a full collection (forced through its inspector, bench/memory-probe.ts) against before them, per
 * user, and without forcing one; key mode (each user's key as Bearer) alongside, and what stays per
 * user once the sessions are closed. BENCH_HEAP_SNAPSHOT=DIR writes the signed-in server's heap
 * snapshot there, to see where the memory goes.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { initializeRequest, type Started, startHttpCli } from "../test/helpers/cli.js";
import { inParallel, registerClient, signInDirect, userAddress } from "../test/helpers/sign-in-direct.js";
import { inspect, rssOf } from "./memory-probe.js";

const IDLE_GOAL_KIB = 128;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const met = (ok: boolean) => (ok ? "met" : "NOT met");
const print = (line: string) => process.stdout.write(`${line}\n`);

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

/** (k) for one mode: `bearerOf(i)` gives user i's bearer (signing them in, for OAuth). */
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
    // Every other user signs in (OAuth), opens a session and calls once, 16 at a time.
    const rest = Array.from({ length: users - 1 }, (_, i) => i + 1);
    const bearers = await inParallel(rest, 16, bearerOf);
    const ids = await inParallel(bearers, 16, async (bearer) => ({
      bearer,
      id: await openIdleSession(url, bearer),
    }));
    // Idle for a moment (waiting 30 s instead changed nothing: V8 collects when allocation calls for it).
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

/** (k): every user of `keys` signed in and idle, against the same users with their keys as Bearer. */
export async function idleMemory(
  env: Record<string, string>,
  keys: string[],
  oauthServer: (env: Record<string, string>) => Promise<{ cli: Started; issuer: string }>,
): Promise<void> {
  // The stores live in memory where they can: a thousand sign-ins make ten thousand durable
  // commits, whose fsyncs take minutes on a disk and change nothing measured here.
  const dir = existsSync("/dev/shm") ? mkdtempSync("/dev/shm/generation-mcp-bench-") : undefined;
  const store = (name: string) =>
    dir === undefined ? {} : { GENERATION_STORE: `sqlite://${join(dir, name)}` };
  const inspected = { ...env, NODE_OPTIONS: "--inspect=127.0.0.1:0" };
  const users = keys.length;
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
        const { access } = await signInDirect(issuer, clientId, keys[i] as string, { from: userAddress(i) });
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
      `(k) resident memory per idle user, ${users} users, each a session opened and list_models called, then idle`,
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
