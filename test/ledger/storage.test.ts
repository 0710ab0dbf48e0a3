/**
 * A ledger that cannot write must refuse to send. We run as root here, where chmod does not stop
 * writes, so the failures are ones root cannot bypass: SQLite's own read-only mode (query_only),
 * a write lock held by another connection past the busy timeout, and paths that cannot be a
 * database. The chmod case runs too when the tests are not root.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Keyv from "keyv";
import sqlite3 from "sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hashKey, LedgerError, openLedger } from "../../src/ledger/index.js";
import { LedgerImpl } from "../../src/ledger/ledger.js";
import { DEFAULT_BACKOFF } from "../../src/ledger/replay.js";
import { SqliteStore } from "../../src/ledger/sqlite.js";
import { KeyvStore } from "../../src/ledger/store.js";
import { API_KEY, BODY, FAST, scriptedSend, serviceError, tempDir } from "./helpers.js";

const keyHash = hashKey(API_KEY);
const req = { keyHash, tool: "generate_image", endpoint: "/api/generate/image", bytes: BODY };
const settings = {
  retentionMs: 1000,
  now: Date.now,
  backoff: { ...DEFAULT_BACKOFF, ...FAST },
  random: Math.random,
};

let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

const run = (db: sqlite3.Database, sql: string) =>
  new Promise<void>((res, rej) => db.run(sql, (e: Error | null) => (e ? rej(e) : res())));

describe("a ledger that cannot write refuses to send", () => {
  it("SQLite in read-only mode: no new claim, no replay of an existing one", async () => {
    const store = await SqliteStore.open(t.uri);
    const ledger = new LedgerImpl(store, settings);
    const s = scriptedSend([{ taskId: "t1" }]);
    const first = await ledger.run(req, s.send, s.ref); // succeeded, not delivered: reusable
    await store.query("PRAGMA query_only=ON");

    const fresh = await ledger.run({ ...req, bytes: "{}" }, s.send, s.ref).catch((e: unknown) => e);
    expect(fresh).toBeInstanceOf(LedgerError);
    expect(fresh).toMatchObject({ code: "LEDGER_WRITE_FAILED" });
    expect((fresh as Error).message).toMatch(/nothing was sent.*readonly/);

    // Even a replay of a known identity is refused: its attempt could not be recorded.
    await expect(ledger.run(req, s.send, s.ref)).rejects.toMatchObject({ code: "LEDGER_WRITE_FAILED" });
    expect(s.calls).toEqual([{ identity: first.identity, bytes: BODY }]);
    await ledger.close();
  });

  it("a database locked by another writer past the busy timeout", async () => {
    const ledger = await openLedger({ storeUri: `${t.uri}?busyTimeoutMs=50`, backoff: FAST });
    const other = new sqlite3.Database(join(t.dir, "ledger.sqlite"));
    await run(other, "BEGIN EXCLUSIVE");
    const s = scriptedSend([{ taskId: "t2" }]);
    await expect(ledger.run(req, s.send, s.ref)).rejects.toMatchObject({ code: "LEDGER_WRITE_FAILED" });
    expect(s.calls).toHaveLength(0);
    await run(other, "ROLLBACK");
    await new Promise<void>((res) => other.close(() => res()));
    await ledger.run(req, s.send, s.ref);
    expect(s.calls).toHaveLength(1);
    await ledger.close();
  });

  it("an unreadable record is an error, never taken for 'no record'", async () => {
    const ledger = await openLedger({ storeUri: t.uri, backoff: FAST });
    const s = scriptedSend([serviceError(503, "TEMPORARILY_UNAVAILABLE")]);
    await ledger.run({ ...req, maxAttempts: 1 }, s.send, s.ref).catch(() => {});
    const db = new sqlite3.Database(join(t.dir, "ledger.sqlite"));
    await run(
      db,
      'UPDATE ledger SET value = \'{"value":{"v":1,"garbled":true}}\' WHERE key LIKE \'ledger:rec:%\'',
    );
    await new Promise<void>((res) => db.close(() => res()));
    await expect(ledger.run(req, s.send, s.ref)).rejects.toMatchObject({ code: "LEDGER_CORRUPT" });
    await expect(ledger.list(keyHash)).rejects.toMatchObject({ code: "LEDGER_CORRUPT" });
    expect(s.calls).toHaveLength(1);
    await ledger.close();
  });

  it("refuses to open a path that cannot be a database", async () => {
    mkdirSync(join(t.dir, "a-directory"));
    await expect(openLedger({ storeUri: `sqlite://${join(t.dir, "a-directory")}` })).rejects.toMatchObject({
      code: "LEDGER_UNAVAILABLE",
    });
    writeFileSync(join(t.dir, "a-file"), "");
    await expect(
      openLedger({ storeUri: `sqlite://${join(t.dir, "a-file", "ledger.sqlite")}` }),
    ).rejects.toBeInstanceOf(LedgerError);
    // Node's recursive mkdir never returns here; the ledger must fail fast instead.
    if (process.platform === "linux") {
      await expect(
        openLedger({ storeUri: "sqlite:///proc/no-such-dir/ledger.sqlite" }),
      ).rejects.toMatchObject({
        code: "LEDGER_UNAVAILABLE",
      });
    }
    await openLedger({ storeUri: `sqlite://${join(t.dir, "new", "nested", "ledger.sqlite")}` }).then((l) =>
      l.close(),
    );
    writeFileSync(join(t.dir, "garbage.sqlite"), "this is not a database ".repeat(100));
    await expect(openLedger({ storeUri: `sqlite://${join(t.dir, "garbage.sqlite")}` })).rejects.toMatchObject(
      {
        code: "LEDGER_UNAVAILABLE",
      },
    );
  });

  it.skipIf(process.getuid?.() === 0)("refuses to open a read-only file (not as root)", async () => {
    const ledger = await openLedger({ storeUri: t.uri });
    await ledger.close();
    chmodSync(join(t.dir, "ledger.sqlite"), 0o444);
    chmodSync(t.dir, 0o555);
    try {
      await expect(openLedger({ storeUri: t.uri })).rejects.toBeInstanceOf(LedgerError);
    } finally {
      chmodSync(t.dir, 0o755);
    }
  });
});

describe("a failed write after the claim", () => {
  it("does not hold back the send: the claim was already durable, and the record still resolves", async () => {
    class FailingSent extends KeyvStore {
      override put(rec: Parameters<KeyvStore["put"]>[0]) {
        return rec.state === "sent" ? Promise.reject(new Error("disk full")) : super.put(rec);
      }
    }
    const ledger = new LedgerImpl(new FailingSent(new Keyv({ namespace: "ledger" }), "failing"), settings);
    const s = scriptedSend([{ taskId: "t3" }]);
    const out = await ledger.run(req, s.send, s.ref);
    expect(s.calls).toHaveLength(1);
    expect(s.calls[0]?.identity).toBe(out.identity);
    const [rec] = await ledger.list(keyHash);
    expect(rec).toMatchObject({ state: "succeeded", taskId: "t3", idempotencyKey: out.identity });
  });
});

describe("other keyv back ends", () => {
  it("apply the same claim rules (atomic within one process)", async () => {
    const keyv = new Keyv({ namespace: "ledger", throwOnErrors: true });
    const ledger = new LedgerImpl(new KeyvStore(keyv, "memory"), settings);
    let sends = 0;
    const send = async (identity: string) => {
      sends++;
      return { taskId: identity };
    };
    const outs = await Promise.all(Array.from({ length: 10 }, () => ledger.run(req, send, (r) => r)));
    expect(new Set(outs.map((o) => o.identity)).size).toBe(1);
    expect(sends).toBe(1);
    const s = scriptedSend([{ taskId: "x" }]);
    await expect(
      ledger.run({ ...req, bytes: "{}", idempotencyKey: outs[0]?.identity ?? "" }, s.send, s.ref),
    ).rejects.toMatchObject({
      code: "IDEMPOTENCY_CONFLICT",
    });
    expect((await ledger.list(keyHash)).map((r) => r.state)).toEqual(["succeeded"]);
  });

  it("sweep expired records and their index entries", async () => {
    let now = 1_000_000;
    const keyv = new Keyv({ namespace: "ledger", throwOnErrors: true });
    const ledger = new LedgerImpl(new KeyvStore(keyv, "memory"), { ...settings, now: () => now });
    const s = scriptedSend([serviceError(422, "INVALID_REQUEST")]);
    await ledger.run(req, s.send, s.ref).catch(() => {});
    const open = scriptedSend([serviceError(503, "TEMPORARILY_UNAVAILABLE")]);
    await ledger.run({ ...req, bytes: "{}", maxAttempts: 1 }, open.send, open.ref).catch(() => {});
    now += settings.retentionMs + 1;
    expect(await ledger.sweep()).toBe(1);
    const keys: string[] = [];
    for await (const [key] of keyv.iterator?.("ledger") ?? []) keys.push(String(key));
    expect(keys.filter((k) => k.includes("rec:"))).toHaveLength(1);
    expect(keys.filter((k) => k.includes("idx:"))).toHaveLength(1);
    expect((await ledger.list(keyHash)).map((r) => r.state)).toEqual(["uncertain"]);
  });
});
