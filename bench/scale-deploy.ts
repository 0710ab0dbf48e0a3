/**
 * The deployment bench/scale.ts loads, as docs/oauth.md documents it, on loopback: the sandbox in a
 * process of its own (`generation-mcp sandbox`), one fresh PostgreSQL schema, and three replicas of
 * the built CLI (`--auth oauth`) behind HAProxy running exactly the file docs/oauth.md gives
 * (test/e2e/balancer.ts reads it from the Markdown: TLS, HTTP mode, `option forwardfor`, its
 * health check on). The replicas believe the front's X-Forwarded-For (GENERATION_TRUSTED_PROXIES).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { Agent, setGlobalDispatcher } from "undici";
import { SANDBOX_API_KEY } from "../src/sandbox/sandbox-key.js";
import { type Replicas, startReplicas } from "../test/e2e/balancer.js";
import { isolatedEnv, type Started, startHttpCli, startSandboxCli } from "../test/helpers/cli.js";
import { selfSignedCert } from "../test/helpers/oauth-flow.js";
import { FORWARDED_ENV } from "../test/helpers/sign-in-direct.js";
import { freePort, freshStore, type StoreFixture } from "../test/ledger/stores.js";

export interface ScaleDeployment extends Replicas {
  /** The front's origin, `https://localhost:<port>`: the OAuth issuer. */
  issuer: string;
  sandboxUrl: string;
  store: StoreFixture;
  /** SIGKILLs replica i; resolves once it is dead. */
  kill(i: number): Promise<void>;
  /** Starts replica i again on its port (the front's check takes it back in). */
  restart(i: number): Promise<Started>;
  /** `count` new sandbox keys with both scopes. */
  newKeys(count: number): Promise<string[]>;
  /** Every task the sandbox created, with its prompt. */
  sandboxTasks(): Promise<Array<{ id: string; owner: string; prompt: string }>>;
  /** Bytes of the store's tables with their indexes and TOAST (pg_total_relation_size), and rows. */
  storeSize(): Promise<{ bytes: number; rows: number; tables: number }>;
  stop(): Promise<void>;
}

const SECRET = Buffer.alloc(32, 7).toString("base64");

/**
 * `users`: the most users one phase signs in. Past the deployment's reserve of sign-ins (2,000 per
 * 30 minutes by default, docs/security.md) the replicas are told to admit that many, as an
 * operator rolling out to a team that large would (GENERATION_HTTP_LIMITS); the strangers' share
 * is raised for the sign-ins in every phase.
 */
export async function startScaleDeployment(users = 0): Promise<ScaleDeployment> {
  const dir = mkdtempSync(join(tmpdir(), "scale-"));
  const tls = selfSignedCert(dir);
  // Every fetch of this process (the sign-ins, the MCP clients) trusts the front's certificate;
  // idle sockets are dropped before the front's keep-alive ends them (see bench/oauth.ts).
  setGlobalDispatcher(
    new Agent({
      connect: { ca: tls.cert, timeout: 60_000 },
      keepAliveTimeout: 500,
      keepAliveMaxTimeout: 500,
    }),
  );
  const cleanups: Array<() => Promise<void> | void> = [() => rmSync(dir, { recursive: true, force: true })];
  const stopAll = async () => {
    for (const c of cleanups.reverse()) await c();
  };
  try {
    const sbEnv = isolatedEnv();
    cleanups.push(() => sbEnv.cleanup());
    const sandbox = await startSandboxCli(sbEnv.env);
    cleanups.push(() => sandbox.stop());
    const store = await freshStore("postgres");
    cleanups.push(() => store.cleanup());
    const port = await freePort();
    const issuer = `https://localhost:${port}`;
    const replicaEnv = () => {
      const iso = isolatedEnv({
        GENERATION_PUBLIC_URL: issuer,
        GENERATION_AUTH_SECRET: SECRET,
        GENERATION_BASE_URL: sandbox.url,
        GENERATION_STORE: store.uri,
        ...FORWARDED_ENV,
        // The bench signs its users in as fast as the front takes them, which the strangers'
        // share (40 a second per replica) would spread over minutes: raised, as the e2e tests of
        // many sign-ins do; it is not what this bench measures.
        GENERATION_HTTP_LIMITS: [
          "anonymousPerSecond=2000,anonymousInFlight=512",
          ...(users > 1_500 ? [`signInReserve=${Math.ceil(users * 1.2)}`] : []),
        ].join(","),
      });
      cleanups.push(() => iso.cleanup());
      return iso.env;
    };
    const front = await startReplicas(replicaEnv, { doc: "oauth", port, tls, args: ["--auth", "oauth"] });
    cleanups.push(() => front.stop());
    const steer = (path: string, init: RequestInit = {}) =>
      fetch(`${sandbox.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${SANDBOX_API_KEY}`, "content-type": "application/json" },
      }).then(async (r) => {
        if (!r.ok) throw new Error(`sandbox ${path}: ${r.status} ${await r.text()}`);
        return r.json();
      });
    return {
      ...front,
      issuer,
      sandboxUrl: sandbox.url,
      store,
      async kill(i) {
        const child = front.replicas[i]?.child;
        if (child === undefined || child.exitCode !== null) return;
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGKILL");
        await exited;
      },
      async restart(i) {
        const old = front.replicas[i];
        if (old === undefined) throw new Error(`no replica ${i}`);
        const again = await startHttpCli(["--auth", "oauth", "--port", new URL(old.url).port], replicaEnv());
        front.replicas[i] = again;
        return again;
      },
      async newKeys(count) {
        const out: string[] = [];
        for (let left = count; left > 0; left -= 10_000) {
          const made = (await steer("/sandbox/keys", {
            method: "POST",
            body: JSON.stringify({ count: Math.min(left, 10_000), scopes: ["read", "generate"] }),
          })) as { keys: string[] };
          out.push(...made.keys);
        }
        return out;
      },
      sandboxTasks: async () => ((await steer("/sandbox/tasks")) as { tasks: [] }).tasks,
      storeSize: () => storeSize(store.uri),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

async function storeSize(uri: string): Promise<{ bytes: number; rows: number; tables: number }> {
  const db = new pg.Client({ connectionString: uri });
  await db.connect();
  try {
    const tables = await db.query<{ name: string; bytes: string }>(
      `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`,
    );
    let rows = 0;
    for (const t of tables.rows) {
      const counted = await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${t.name}"`);
      rows += Number(counted.rows[0]?.n ?? 0);
    }
    const bytes = tables.rows.reduce((sum, t) => sum + Number(t.bytes), 0);
    return { bytes, rows, tables: tables.rows.length };
  } finally {
    await db.end();
  }
}
