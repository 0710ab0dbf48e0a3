/**
 * The store port on all three back ends, against real servers: several ledgers on one store (as
 * several replicas would be) racing on one request, compare-and-set and the forward-only rule,
 * durability refused at open, and a store that dies mid-run.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newIdentity } from "../../src/ledger/identity.js";
import { hashKey, type Ledger, LedgerError, openLedger, openStore } from "../../src/ledger/open-ledger.js";
import type { StoredRecord } from "../../src/ledger/record.js";
import { checkAdvance } from "../../src/ledger/record-rules.js";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { isolatedEnv, startHttpCli } from "../helpers/cli.js";
import { API_KEY, BODY, FAST, fastLedger, scriptedSend } from "./ledger-helpers.js";
import {
  available,
  endWithThisProcess,
  freshStore,
  type PostgresServer,
  type RedisServer,
  redisCli,
  STORE_KINDS,
  type StoreFixture,
  startPostgres,
  startRedis,
} from "./stores.js";

const keyHash = hashKey(API_KEY);
const req = { keyHash, tool: "generate_image", endpoint: "/api/generate/image", bytes: BODY };
const ref = (r: { taskId: string }) => ({ taskId: r.taskId });

describe.each(STORE_KINDS)("the store port on %s", (kind) => {
  let t: StoreFixture | undefined;
  let ledgers: Ledger[] = [];
  beforeEach(async (ctx) => {
    if (!(await available(kind))) return ctx.skip();
    t = await freshStore(kind);
    // One after another: three SQLite connections switching a new file to WAL at the same moment
    // can meet a lock no busy timeout waits for (the race under test is the claims, not the opens).
    for (let i = 0; i < 3; i++) ledgers.push(await fastLedger(t.uri));
  });
  afterEach(async () => {
    await Promise.all(ledgers.map((l) => l.close()));
    ledgers = [];
    await t?.cleanup();
    t = undefined;
  });

  it("three ledgers on one store racing on one request claim one identity and send its bytes only", async () => {
    const sent: Array<{ identity: string; bytes: string }> = [];
    const send = async (identity: string, bytes: string) => {
      sent.push({ identity, bytes });
      await new Promise((r) => setTimeout(r, 20));
      return { taskId: `task-${identity}` };
    };
    const outs = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (ledgers[i % 3] as Ledger).run(req, send, ref)),
    );
    const identities = new Set(outs.map((o) => o.identity));
    expect(identities.size).toBe(1);
    expect(outs.filter((o) => !o.reused)).toHaveLength(1);
    // Replicas that found the open record resume it: same identity, same bytes (no second charge).
    expect(new Set(sent.map((s) => s.identity))).toEqual(identities);
    expect(sent.every((s) => s.bytes === BODY)).toBe(true);
    const [rec, ...rest] = await (ledgers[0] as Ledger).list(keyHash);
    expect(rest).toEqual([]);
    expect(rec).toMatchObject({ state: "succeeded", taskId: `task-${[...identities][0]}` });
  });

  it("distinct requests across three ledgers each get their own identity", async () => {
    const s = scriptedSend([{ taskId: "t" }]);
    const outs = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (ledgers[i % 3] as Ledger).run({ ...req, bytes: `{"n":${i}}` }, s.send, s.ref),
      ),
    );
    expect(new Set(outs.map((o) => o.identity)).size).toBe(30);
    expect(await (ledgers[1] as Ledger).list(keyHash)).toHaveLength(30);
  });

  it("a write from a stale version does not land, and a final state never goes back", async () => {
    const store = await openStore(t?.uri ?? "");
    try {
      const now = Date.now();
      const fresh = (identity: string): StoredRecord => ({
        ...{ v: 1, version: 1, identity, explicit: false, tool: req.tool, endpoint: req.endpoint },
        ...{ keyHash, bytes: BODY, bodyHash: "b".repeat(64), state: "prepared", delivered: false },
        ...{ attempts: 0, createdAt: now, updatedAt: now },
      });
      const { record: v1 } = await store.claim({
        keyHash,
        tool: req.tool,
        bodyHash: "b".repeat(64),
        now,
        newIdentity: () => newIdentity(now),
        fresh,
        reusable: () => true,
      });
      const done: StoredRecord = { ...v1, version: 2, state: "succeeded", taskId: "t1" };
      const sent: StoredRecord = { ...v1, version: 2, state: "sent", attempts: 1 };
      expect(await store.replace(v1, done)).toBe(true);
      // Another replica still holding version 1 loses: its `sent` would have undone the success.
      expect(await store.replace(v1, sent)).toBe(false);
      expect(await store.get(keyHash, v1.identity)).toMatchObject({ version: 2, state: "succeeded" });
      expect(() => checkAdvance(done, { ...done, version: 3, state: "sent" })).toThrow(
        expect.objectContaining({ code: "LEDGER_BACKWARD" }),
      );
    } finally {
      await store.close();
    }
  });
});

describe("Redis durability at open", () => {
  let weak: RedisServer | undefined;
  beforeAll(async () => {
    if (await available("redis")) weak = await startRedis(["--appendfsync", "everysec"]);
  });
  afterAll(async () => weak?.stop());

  it("refuses appendfsync everysec with one line naming the setting; relaxed accepts it loudly", async (ctx) => {
    if (weak === undefined) return ctx.skip();
    const uri = `redis://127.0.0.1:${weak.port}`;
    const err = await openLedger({ storeUri: uri }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).code).toBe("LEDGER_NOT_DURABLE");
    expect((err as Error).message).toMatch(/appendfsync everysec; it needs appendfsync always/);
    expect((err as Error).message).not.toContain("\n");
    const relaxed = await openLedger({ storeUri: `${uri}?durability=relaxed` });
    expect(relaxed.durabilityNote).toMatch(/appendfsync everysec.*durability=relaxed/);
    expect(relaxed.description).toContain(relaxed.durabilityNote);
    await relaxed.close();
  });

  it("a relaxed store is said on stderr at start and on top of every list_requests answer", async (ctx) => {
    if (weak === undefined) return ctx.skip();
    const iso = isolatedEnv({
      GENERATION_STORE: `redis://127.0.0.1:${weak.port}?durability=relaxed`,
      GENERATION_API_KEY: SANDBOX_API_KEY,
    });
    const server = await startHttpCli(["--sandbox"], iso.env);
    const client = new Client({ name: "test", version: "1.0.0" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const out = await client.callTool({ name: "list_requests", arguments: {} });
      const text = (out.content as Array<{ text?: string }>)[0]?.text ?? "";
      expect(text).toMatch(/^Warning: redis runs with appendfsync everysec.*durability=relaxed/);
      expect(server.stderr()).toMatch(/WARNING: redis runs with appendfsync everysec/);
    } finally {
      await client.close();
      await server.stop();
      iso.cleanup();
    }
  });

  it("refuses a Redis without appendonly", async (ctx) => {
    if (weak === undefined) return ctx.skip();
    redisCli(weak.port, "CONFIG", "SET", "appendonly", "no");
    const err = await openLedger({ storeUri: `redis://127.0.0.1:${weak.port}` }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/appendonly no; it needs appendonly yes/);
  });
});

/** Leaves one uncertain record (the send's outcome unknown), as a crash mid-request would. */
async function leaveUncertain(ledger: Ledger): Promise<string> {
  const lost = scriptedSend([Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })]);
  const err = await ledger.run({ ...req, maxAttempts: 1 }, lost.send, lost.ref).catch((e: unknown) => e);
  return (err as { identity: string }).identity;
}

/** While the store is down: refused with a clear message, nothing sent. Then resumed once it is back. */
async function outage(ledger: Ledger, identity: string, down: () => Promise<void>, up: () => Promise<void>) {
  await down();
  const s = scriptedSend([{ taskId: "after" }]);
  const err = await ledger.run(req, s.send, s.ref).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(LedgerError);
  expect((err as Error).message).toMatch(/nothing was sent/);
  const other = await ledger.run({ ...req, bytes: '{"other":1}' }, s.send, s.ref).catch((e: unknown) => e);
  expect(other).toBeInstanceOf(LedgerError);
  expect(s.calls).toEqual([]);
  await up();
  let out: Awaited<ReturnType<Ledger["run"]>> | undefined;
  // The client reconnects in the background: the first calls after the restart may still refuse.
  for (let i = 0; i < 100 && out === undefined; i++) {
    out = await ledger.run(req, s.send, s.ref).catch(async () => {
      await new Promise((r) => setTimeout(r, 100));
      return undefined;
    });
  }
  expect(out?.identity).toBe(identity);
  expect(s.calls).toEqual([{ identity, bytes: BODY }]);
}

describe("the store stopped mid-run", () => {
  it("Redis killed: paid calls refuse and send nothing; restarted, the open record resumes", async (ctx) => {
    if (!(await available("redis"))) return ctx.skip();
    const server = await startRedis();
    const ledger = await openLedger({ storeUri: `redis://127.0.0.1:${server.port}`, backoff: FAST });
    let again: RedisServer | undefined;
    try {
      const identity = await leaveUncertain(ledger);
      await outage(
        ledger,
        identity,
        async () => {
          server.proc.kill("SIGKILL");
          await new Promise((r) => server.proc.once("exit", r));
        },
        async () => {
          // Same folder and port: the append-only file brings the records back.
          again = await restartRedis(server);
        },
      );
    } finally {
      await ledger.close();
      again?.proc.kill("SIGKILL");
      await server.stop();
    }
  });

  it("PostgreSQL stopped with pg_ctl -m immediate: refused, nothing sent; restarted, the open record resumes", async (ctx) => {
    if (!(await available("postgres"))) return ctx.skip();
    let pg: PostgresServer | undefined;
    try {
      pg = await startPostgres();
    } catch (cause) {
      if (process.env.CI === "true") throw cause;
      console.warn(`\n!!! cannot start a PostgreSQL of our own (initdb, pg_ctl): SKIPPED\n`);
      return ctx.skip();
    }
    const ledger = await openLedger({ storeUri: pg.uri, backoff: FAST });
    try {
      const identity = await leaveUncertain(ledger);
      await outage(ledger, identity, pg.crash, pg.start);
    } finally {
      await ledger.close();
      await pg.destroy();
    }
  });
});

async function restartRedis(old: RedisServer): Promise<RedisServer> {
  const { spawn } = await import("node:child_process");
  const args = ["--port", String(old.port), "--bind", "127.0.0.1", "--dir", old.dir, "--save", ""];
  args.push("--appendonly", "yes", "--appendfsync", "always");
  const proc = spawn("redis-server", args, { stdio: "ignore" });
  endWithThisProcess(proc);
  for (let i = 0; i < 100; i++) {
    try {
      if (redisCli(old.port, "PING") === "PONG") break;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  return { ...old, proc, stop: async () => void proc.kill("SIGKILL") };
}
