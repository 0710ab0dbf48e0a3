/**
 * The three ledger back ends as test fixtures, each a fresh empty store:
 * - sqlite: a file in a temp folder;
 * - postgres: a fresh schema in the local server (LEDGER_TEST_POSTGRES, default
 *   postgres://postgres@127.0.0.1:5432/test), named through the URI's `options`;
 * - redis: this test process's own redis-server (appendonly yes, appendfsync always) on a free
 *   port in a temp folder, flushed for each fixture. The machine's shared Redis keeps nothing on
 *   disk, which the ledger rightly refuses.
 * A server that is not there skips its tests with one loud line; under CI=true that is a failure.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { openStore } from "../../src/ledger/open-ledger.js";
import type { LedgerStore } from "../../src/ledger/store.js";
import { tempDir } from "./ledger-helpers.js";

export type StoreKind = "sqlite" | "postgres" | "redis";
export const STORE_KINDS: StoreKind[] = ["sqlite", "postgres", "redis"];
export const POSTGRES_URI = process.env.LEDGER_TEST_POSTGRES ?? "postgres://postgres@127.0.0.1:5432/test";

export interface StoreFixture {
  kind: StoreKind;
  uri: string;
  cleanup(): Promise<void>;
}

/** Whether a server for `kind` answers here; false means skip (and, under CI, fail). */
const reachable = new Map<StoreKind, Promise<boolean>>();
export function available(kind: StoreKind): Promise<boolean> {
  let known = reachable.get(kind);
  if (known === undefined) {
    known = probe(kind).then((ok) => {
      if (!ok) {
        const line = `${kind} is not reachable here: its ledger tests are SKIPPED (CI=true makes this a failure)`;
        if (process.env.CI === "true") throw new Error(line);
        console.warn(`\n!!! ${line}\n`);
      }
      return ok;
    });
    reachable.set(kind, known);
  }
  return known;
}

async function probe(kind: StoreKind): Promise<boolean> {
  if (kind === "sqlite") return true;
  if (kind === "postgres") {
    const pg = (await import("pg")).default;
    const client = new pg.Client({ connectionString: POSTGRES_URI, connectionTimeoutMillis: 3_000 });
    try {
      await client.connect();
      await client.end();
      return true;
    } catch {
      return false;
    }
  }
  try {
    await ownRedis();
    return true;
  } catch {
    return false;
  }
}

export async function freshStore(kind: StoreKind): Promise<StoreFixture> {
  if (kind === "sqlite") {
    const t = tempDir();
    return { kind, uri: t.uri, cleanup: async () => t.cleanup() };
  }
  if (kind === "postgres") {
    const schema = `lt_${randomBytes(6).toString("hex")}`;
    const pg = (await import("pg")).default;
    const admin = new pg.Client({ connectionString: POSTGRES_URI });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const sep = POSTGRES_URI.includes("?") ? "&" : "?";
    return {
      kind,
      uri: `${POSTGRES_URI}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      cleanup: async () => {
        const c = new pg.Client({ connectionString: POSTGRES_URI });
        await c.connect();
        await c.query(`DROP SCHEMA ${schema} CASCADE`);
        await c.end();
      },
    };
  }
  const { port } = await ownRedis();
  redisCli(port, "FLUSHALL");
  return { kind, uri: `redis://127.0.0.1:${port}`, cleanup: async () => {} };
}

export function redisCli(port: number, ...args: string[]): string {
  return execFileSync("redis-cli", ["-p", String(port), ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

export interface RedisServer {
  port: number;
  dir: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Ends `server` once this process is gone, by a shell that watches both: the unit project's workers
 * are killed, not exited, at the end of a run, so an `exit` handler alone left servers running.
 */
export function endWithThisProcess(server: ChildProcess): void {
  const [me, it] = [process.pid, server.pid];
  if (it === undefined) return;
  const watch = `while kill -0 ${me} 2>/dev/null && kill -0 ${it} 2>/dev/null; do sleep 0.2; done; kill -9 ${it} 2>/dev/null`;
  spawn("sh", ["-c", watch], { stdio: "ignore", detached: true }).unref();
}

/** Starts a redis-server on a free loopback port in a temp folder; `extra` overrides the durable settings. */
export async function startRedis(extra: string[] = []): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), "ledger-redis-"));
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""];
  args.push("--appendonly", "yes", "--appendfsync", "always", ...extra);
  const proc = spawn("redis-server", args, { stdio: "ignore" });
  endWithThisProcess(proc);
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  proc.once("error", () => {});
  for (let i = 0; i < 100; i++) {
    try {
      if (redisCli(port, "PING") === "PONG") break;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
    if (proc.exitCode !== null) throw new Error("redis-server exited at start");
  }
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  return { port, dir, proc, stop };
}

let own: Promise<RedisServer> | undefined;
/** One durable redis-server per test process, stopped when the process exits. */
function ownRedis(): Promise<RedisServer> {
  if (own === undefined) {
    own = startRedis();
    void own.then((s) => process.once("exit", () => s.proc.kill("SIGKILL"))).catch(() => {});
  }
  return own;
}

export interface PostgresServer {
  port: number;
  uri: string;
  start(): Promise<void>;
  /** `pg_ctl stop -m immediate`: the server dies as in a crash, without a checkpoint. */
  crash(): Promise<void>;
  destroy(): Promise<void>;
}

/** As the postgres user when we are root: initdb and the server refuse to run as root. */
function asPostgres(cmd: string, args: string[]): string {
  const root = process.getuid?.() === 0;
  return execFileSync(root ? "runuser" : cmd, root ? ["-u", "postgres", "--", cmd, ...args] : args, {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** A PostgreSQL server of our own (initdb in a temp folder, a free loopback port, trust auth). */
export async function startPostgres(): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), "ledger-pg-"));
  if (process.getuid?.() === 0) execFileSync("chown", ["postgres:", dir]);
  const data = join(dir, "data");
  asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  const start = async () => {
    asPostgres("pg_ctl", ["-D", data, "-o", opts, "-l", join(dir, "log"), "-w", "start"]);
  };
  await start();
  return {
    port,
    uri: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    crash: async () => {
      asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    },
    destroy: async () => {
      try {
        asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } catch {}
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Two stores open on one fresh `kind` store for each test of the calling `describe`, as two
 * replicas would have them (the test is skipped where `kind` is not available); closed and
 * cleaned up after it. Read the returned list inside a test.
 */
export function twoReplicaStores(kind: StoreKind): LedgerStore[] {
  const stores: LedgerStore[] = [];
  let t: StoreFixture | undefined;
  beforeEach(async (ctx) => {
    if (!(await available(kind))) return ctx.skip();
    t = await freshStore(kind);
    for (let i = 0; i < 2; i++) stores.push(await openStore(t.uri));
  });
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores.length = 0;
    await t?.cleanup();
  });
  return stores;
}
