/**
 * HAProxy (Debian's package) in front of server replicas, on loopback ports, configured as
 * docs/deploying.md#the-balancer says: round robin for requests without a session, and a 2025-11-25
 * session pinned to the replica that created it, learned from the `Mcp-Session-Id` response header.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";
import { type Receiver, startReceiver } from "../ledger/fixtures/receiver.js";
import { freePort, freshStore, type StoreFixture } from "../ledger/stores.js";

export interface Balancer {
  url: string;
  /** Sessions each replica was sent (HAProxy's `stot` per server). */
  sessionsPerReplica(): Promise<number[]>;
  stop(): Promise<void>;
}

export function haproxyInstalled(): boolean {
  try {
    execFileSync("haproxy", ["-v"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * The configuration docs/deploying.md#the-balancer documents, for `replicas` given as host:port;
 * with `tlsPem`, the TLS front docs/oauth.md adds.
 */
export function haproxyConfig(port: number, statsPort: number, replicas: string[], tlsPem?: string): string {
  return `global
  maxconn 4096

defaults
  mode http
  timeout connect 5s
  timeout client 10m
  timeout server 10m

frontend mcp
  bind 127.0.0.1:${port}${tlsPem === undefined ? "" : ` ssl crt ${tlsPem}`}
  default_backend replicas

backend replicas
  balance roundrobin
  stick-table type string len 128 size 1m expire 1h
  stick on req.hdr(mcp-session-id)
  stick store-response res.hdr(mcp-session-id)
${replicas.map((r, i) => `  server r${i + 1} ${r}`).join("\n")}

listen stats
  bind 127.0.0.1:${statsPort}
  stats enable
  stats uri /stats
`;
}

/** `tlsPem` (certificate and key in one file) puts TLS on the front, as docs/oauth.md shows. */
export async function startHaproxy(
  replicas: string[],
  o: { port?: number; tlsPem?: string } = {},
): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), "haproxy-"));
  const port = o.port ?? (await freePort());
  const statsPort = await freePort();
  const cfg = join(dir, "haproxy.cfg");
  writeFileSync(cfg, haproxyConfig(port, statsPort, replicas, o.tlsPem));
  const proc: ChildProcess = spawn("haproxy", ["-db", "-f", cfg], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const url = o.tlsPem === undefined ? `http://127.0.0.1:${port}/mcp` : `https://localhost:${port}/mcp`;
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`haproxy exited: ${stderr}`);
    const up = await fetch(`http://127.0.0.1:${statsPort}/stats;csv`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 100) throw new Error(`haproxy did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    async sessionsPerReplica() {
      const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
      const [head = "", ...rows] = csv.replace(/^# /, "").trim().split("\n");
      const cols = head.split(",");
      const [px, sv, stot] = ["pxname", "svname", "stot"].map((c) => cols.indexOf(c));
      return rows
        .map((r) => r.split(","))
        .filter((r) => r[px ?? 0] === "replicas" && /^r\d+$/.test(r[sv ?? 0] ?? ""))
        .map((r) => Number(r[stot ?? 0]));
    },
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Replicas {
  replicas: Started[];
  balancer: Balancer;
  stop(): Promise<void>;
}

/**
 * Three replicas of the built CLI (`--transport http`), each started with `env()`, behind one
 * HAProxy (`o` as for startHaproxy); whatever started is stopped if a later one fails.
 */
export async function startReplicas(
  env: () => Record<string, string>,
  o: { port?: number; tlsPem?: string } = {},
): Promise<Replicas> {
  const started = await Promise.allSettled([0, 1, 2].map(() => startHttpCli([], env())));
  const replicas = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const stopReplicas = () => Promise.all(replicas.map((r) => r.stop()));
  const failed = started.find((s) => s.status === "rejected");
  if (failed !== undefined) {
    await stopReplicas();
    throw failed.reason;
  }
  const balancer = await startHaproxy(
    replicas.map((r) => new URL(r.url).host),
    o,
  ).catch(async (error: unknown) => {
    await stopReplicas();
    throw error;
  });
  return {
    replicas,
    balancer,
    async stop() {
      await balancer.stop();
      await stopReplicas();
    },
  };
}

/**
 * The deployment docs/deploying.md documents, on loopback: an in-process sandbox (50x time) behind
 * a recording receiver, one fresh PostgreSQL store, and three replicas on it behind HAProxy, each
 * with `o.env` added to its environment.
 */
export interface Deployment extends Replicas {
  sandbox: Sandbox;
  receiver: Receiver;
  store: StoreFixture;
  /** A private environment for one more replica on this store and receiver; removed by stop(). */
  replicaEnv(extra?: Record<string, string>): Record<string, string>;
}

export async function startDeployment(
  o: { env?: Record<string, string>; port?: number; tlsPem?: string } = {},
): Promise<Deployment> {
  const sandbox = createSandbox({ timeScale: 50 });
  const envs: Array<ReturnType<typeof isolatedEnv>> = [];
  let receiver: Receiver | undefined;
  let store: StoreFixture | undefined;
  let front: Replicas | undefined;
  const stop = async () => {
    await front?.stop();
    await receiver?.close();
    await sandbox.close();
    await store?.cleanup();
    for (const e of envs) e.cleanup();
  };
  try {
    const rec = await startReceiver(sandbox);
    receiver = rec;
    const db = await freshStore("postgres");
    store = db;
    const replicaEnv = (extra: Record<string, string> = {}) => {
      const iso = isolatedEnv({ GENERATION_BASE_URL: rec.url, GENERATION_STORE: db.uri, ...extra });
      envs.push(iso);
      return iso.env;
    };
    const { env = {}, ...balancerOptions } = o;
    front = await startReplicas(() => replicaEnv(env), balancerOptions);
    return { ...front, sandbox, receiver: rec, store: db, replicaEnv, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
