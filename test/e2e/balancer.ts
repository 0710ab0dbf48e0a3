/**
 * HAProxy (Debian's package) in front of server replicas, on loopback ports, running the file
 * docs/deploying.md (key mode) or docs/oauth.md gives whole, read from the Markdown
 * (test/helpers/doc-files.ts) with only its ports, addresses and file paths replaced: TLS at the
 * front, HTTP mode, X-Forwarded-For, its health check on, and a 2025-11-25 session pinned to the
 * replica that created it, learned from the `Mcp-Session-Id` response header.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, fetch as undiciFetch } from "undici";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";
import { documentedFile, placed } from "../helpers/doc-files.js";
import { type FetchLike, selfSignedCert, type Tls } from "../helpers/oauth-flow.js";
import { type Receiver, startReceiver } from "../ledger/fixtures/receiver.js";
import { freePort, freshStore, type StoreFixture } from "../ledger/stores.js";

/** Which documented file: key mode's (docs/deploying.md) or OAuth mode's (docs/oauth.md). */
export type Documented = "key" | "oauth";
const DOCUMENTED: Record<Documented, readonly [string, string]> = {
  key: ["docs/deploying.md", "haproxy-key.cfg"],
  oauth: ["docs/oauth.md", "haproxy-oauth.cfg"],
};
/** The replica addresses the documented files name, in order. */
const DOCUMENTED_REPLICAS = ["10.0.0.11:3333", "10.0.0.12:3333", "10.0.0.13:3333"];

export interface BalancerOptions {
  /** The documented file to run (default key). */
  doc?: Documented;
  /** The front's port (default: a free one). */
  port?: number;
  /** The front's certificate (default: a self-signed one for localhost, made here). */
  tls?: Tls;
}

export interface Balancer {
  /** `https://localhost:<port>/mcp` */
  url: string;
  /** fetch that trusts the front's certificate. */
  fetch: FetchLike;
  /** The configuration HAProxy runs: the documented file, placeholders replaced. */
  config: string;
  /** The front's certificate. */
  tls: Tls;
  /** Sessions each replica was sent (HAProxy's `stot` per server). */
  sessionsPerReplica(): Promise<number[]>;
  /** Each server's state and last check, as HAProxy's stats say (`UP`, `L7OK`). */
  servers(): Promise<Array<{ name: string; status: string; check: string }>>;
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

/** The documented file for `replicas` (three, host:port) and loopback ports and temporary paths. */
export function haproxyConfig(
  doc: Documented,
  o: { port: number; statsPort: number; replicas: string[]; pem: string; socket: string },
): string {
  if (o.replicas.length !== DOCUMENTED_REPLICAS.length)
    throw new Error("the documented file has three servers");
  const [md, name] = DOCUMENTED[doc];
  return placed(documentedFile(md, name), [
    ...DOCUMENTED_REPLICAS.map((at, i) => [at, o.replicas[i] ?? ""] as const),
    [":443", `127.0.0.1:${o.port}`],
    ["127.0.0.1:8404", `127.0.0.1:${o.statsPort}`],
    ["/etc/haproxy/certs/mcp.example.com.pem", o.pem],
    ["/run/haproxy/admin.sock", o.socket],
  ]);
}

/** Rows of HAProxy's CSV stats for the `replicas` backend's servers. */
async function serverRows(statsPort: number): Promise<Array<Record<string, string>>> {
  const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
  const [head = "", ...rows] = csv.replace(/^# /, "").trim().split("\n");
  const cols = head.split(",");
  return rows
    .map((r) => Object.fromEntries(r.split(",").map((v, i) => [cols[i] ?? "", v])))
    .filter((r) => r.pxname === "replicas" && /^r\d+$/.test(r.svname ?? ""));
}

/** HAProxy on the documented file; resolves once every server passed its health check. */
export async function startHaproxy(replicas: string[], o: BalancerOptions = {}): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), "haproxy-"));
  const tls = o.tls ?? selfSignedCert(dir);
  const port = o.port ?? (await freePort());
  const statsPort = await freePort();
  const cfg = join(dir, "haproxy.cfg");
  const config = haproxyConfig(o.doc ?? "key", {
    port,
    statsPort,
    replicas,
    pem: tls.pemPath,
    socket: join(dir, "admin.sock"),
  });
  writeFileSync(cfg, config);
  const proc: ChildProcess = spawn("haproxy", ["-db", "-f", cfg], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const servers = async () =>
    (await serverRows(statsPort)).map((r) => ({
      name: r.svname ?? "",
      status: r.status ?? "",
      check: r.check_status ?? "",
    }));
  try {
    // Up once the stats answer and every server's check passed (inter 2s: within a few seconds).
    for (let i = 0; ; i++) {
      if (proc.exitCode !== null) throw new Error(`haproxy exited: ${stderr}`);
      const states = await servers().catch(() => []);
      if (states.length > 0 && states.every((s) => s.status === "UP" && s.check === "L7OK")) break;
      if (i > 300)
        throw new Error(`haproxy's servers did not pass their checks: ${JSON.stringify(states)} ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const agent = new Agent({ connect: { ca: tls.cert } });
  return {
    url: `https://localhost:${port}/mcp`,
    fetch: (url, init) =>
      undiciFetch(url, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>,
    config,
    tls,
    async sessionsPerReplica() {
      return (await serverRows(statsPort)).map((r) => Number(r.stot));
    },
    servers,
    stop: async () => {
      await stop();
      await agent.close();
    },
  };
}

export interface Replicas {
  replicas: Started[];
  balancer: Balancer;
  stop(): Promise<void>;
}

/**
 * Three replicas of the built CLI (`--transport http` and `o.args`), each started with `env()`, behind one
 * HAProxy on a documented file (`o` as for startHaproxy); whatever started is stopped if a later
 * one fails.
 */
export async function startReplicas(
  env: () => Record<string, string>,
  o: BalancerOptions & { args?: string[] } = {},
): Promise<Replicas> {
  const { args = [], ...balancerOptions } = o;
  const started = await Promise.allSettled([0, 1, 2].map(() => startHttpCli(args, env())));
  const replicas = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const stopReplicas = () => Promise.all(replicas.map((r) => r.stop()));
  const failed = started.find((s) => s.status === "rejected");
  if (failed !== undefined) {
    await stopReplicas();
    throw failed.reason;
  }
  const balancer = await startHaproxy(
    replicas.map((r) => new URL(r.url).host),
    balancerOptions,
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
  o: { env?: Record<string, string> } & BalancerOptions = {},
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
