/**
 * A ledger that cannot write must refuse to send. We run as root here, where chmod does not stop
 * writes, so the failures are ones root cannot bypass: SQLite's own read-only mode (query_only),
 * a write lock held by another connection past the busy timeout, and paths that cannot be a
 * database. The chmod case runs too when the tests are not root.
 */
import { chmodSync, mkdirSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LedgerImpl } from "../../src/ledger/ledger.js";
import { hashKey, LedgerError, openLedger } from "../../src/ledger/open-ledger.js";
import { DEFAULT_BACKOFF } from "../../src/ledger/replay.js";
import { SqliteStore } from "../../src/ledger/stores/sqlite.js";
import { connect, NO_DRIVER_ACTION, NoSqliteDriverError } from "../../src/ledger/stores/sqlite-connection.js";
import {
  API_KEY,
  BODY,
  FAST,
  scriptedSend,
  serviceError,
  tempDir,
  uriFor,
  withParam,
} from "./ledger-helpers.js";

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

/** A second connection to the ledger's file, as another process would hold it. */
const second = () => connect(t.path);

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
    const ledger = await openLedger({ storeUri: withParam(t.uri, "busyTimeoutMs=50"), backoff: FAST });
    const other = await second();
    await other.query("BEGIN EXCLUSIVE");
    const s = scriptedSend([{ taskId: "t2" }]);
    await expect(ledger.run(req, s.send, s.ref)).rejects.toMatchObject({ code: "LEDGER_WRITE_FAILED" });
    expect(s.calls).toHaveLength(0);
    await other.query("ROLLBACK");
    await other.close();
    await ledger.run(req, s.send, s.ref);
    expect(s.calls).toHaveLength(1);
    await ledger.close();
  });

  it("an unreadable record is an error, never taken for 'no record'", async () => {
    const ledger = await openLedger({ storeUri: t.uri, backoff: FAST });
    const s = scriptedSend([serviceError(503, "TEMPORARILY_UNAVAILABLE")]);
    await ledger.run({ ...req, maxAttempts: 1 }, s.send, s.ref).catch(() => {});
    const db = await second();
    await db.query(
      'UPDATE ledger SET value = \'{"value":{"v":1,"garbled":true}}\' WHERE key LIKE \'ledger:rec:%\'',
    );
    await db.close();
    await expect(ledger.run(req, s.send, s.ref)).rejects.toMatchObject({ code: "LEDGER_CORRUPT" });
    await expect(ledger.list(keyHash)).rejects.toMatchObject({ code: "LEDGER_CORRUPT" });
    expect(s.calls).toHaveLength(1);
    await ledger.close();
  });

  it("refuses to open a path that cannot be a database", async () => {
    mkdirSync(join(t.dir, "a-directory"));
    await expect(openLedger({ storeUri: uriFor(join(t.dir, "a-directory")) })).rejects.toMatchObject({
      code: "LEDGER_UNAVAILABLE",
    });
    writeFileSync(join(t.dir, "a-file"), "");
    await expect(
      openLedger({ storeUri: uriFor(join(t.dir, "a-file", "ledger.sqlite")) }),
    ).rejects.toBeInstanceOf(LedgerError);
    // Node's recursive mkdir never returns here; the ledger must fail fast instead.
    if (process.platform === "linux") {
      await expect(openLedger({ storeUri: uriFor("/proc/no-such-dir/ledger.sqlite") })).rejects.toMatchObject(
        {
          code: "LEDGER_UNAVAILABLE",
        },
      );
    }
    await openLedger({ storeUri: uriFor(join(t.dir, "new", "nested", "ledger.sqlite")) }).then((l) =>
      l.close(),
    );
    writeFileSync(join(t.dir, "garbage.sqlite"), "this is not a database ".repeat(100));
    await expect(openLedger({ storeUri: uriFor(join(t.dir, "garbage.sqlite")) })).rejects.toMatchObject({
      code: "LEDGER_UNAVAILABLE",
    });
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
    const store = await SqliteStore.open(t.uri);
    const replace = store.replace.bind(store);
    store.replace = (prev, next) =>
      next.state === "sent" ? Promise.reject(new Error("disk full")) : replace(prev, next);
    const ledger = new LedgerImpl(store, settings);
    const s = scriptedSend([{ taskId: "t3" }]);
    const out = await ledger.run(req, s.send, s.ref);
    expect(s.calls).toHaveLength(1);
    expect(s.calls[0]?.identity).toBe(out.identity);
    const [rec] = await ledger.list(keyHash);
    expect(rec).toMatchObject({ state: "succeeded", taskId: "t3", idempotencyKey: out.identity });
  });
});

describe("the writes of one delivered call", () => {
  it("are its claim and one more: the success and its delivered mark together, for every answer", async () => {
    const store = await SqliteStore.open(t.uri);
    const replace = store.replace.bind(store);
    const writes: string[] = [];
    store.replace = (prev, next) => {
      writes.push(`${next.state}${next.delivered ? " delivered" : ""}`);
      return replace(prev, next);
    };
    const ledger = new LedgerImpl(store, settings);
    const s = scriptedSend([{ taskId: "t6" }]);
    const [out, joined] = await Promise.all([ledger.run(req, s.send, s.ref), ledger.run(req, s.send, s.ref)]);
    expect(joined).toMatchObject({ identity: out.identity, reused: true, joined: true });
    // Until the transport says, an identical call and a listing wait for the mark.
    const marks = [out.handOver(), joined.handOver()];
    const listed = ledger.list(keyHash);
    await Promise.all(marks.map((m) => m.settle(true)));
    expect((await listed)[0]).toMatchObject({ state: "succeeded", taskId: "t6", delivered: true });
    expect(writes).toEqual(["succeeded delivered"]);
    expect(s.calls).toHaveLength(1);
    // Delivered, the same request again is new work.
    const again = await ledger.run(req, scriptedSend([{ taskId: "t7" }]).send, s.ref);
    expect(again).toMatchObject({ reused: false, joined: false });
    expect(again.identity).not.toBe(out.identity);
    await ledger.close();
  });
});

describe("the store port used directly", () => {
  it("applies the claim rules", async () => {
    const ledger = new LedgerImpl(await SqliteStore.open(t.uri), settings);
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
    await ledger.close();
  });

  it("sweep expired records and their index entries", async () => {
    let now = 1_000_000;
    const store = await SqliteStore.open(t.uri);
    const ledger = new LedgerImpl(store, { ...settings, now: () => now });
    const s = scriptedSend([serviceError(422, "INVALID_REQUEST")]);
    await ledger.run(req, s.send, s.ref).catch(() => {});
    const open = scriptedSend([serviceError(503, "TEMPORARILY_UNAVAILABLE")]);
    await ledger.run({ ...req, bytes: "{}", maxAttempts: 1 }, open.send, open.ref).catch(() => {});
    now += settings.retentionMs + 1;
    expect(await ledger.sweep()).toBe(1);
    const keys = (await store.query("SELECT key FROM ledger")).map((r) => String(r.key));
    expect(keys.filter((k) => k.includes("rec:"))).toHaveLength(1);
    expect(keys.filter((k) => k.includes("idx:"))).toHaveLength(1);
    expect((await ledger.list(keyHash)).map((r) => r.state)).toEqual(["uncertain"]);
    await ledger.close();
  });
});

describe("the ledger file deleted or replaced while the server runs", () => {
  it("refuses later claims, writes the records back, and a restart resumes the same identity", async () => {
    const ledger = await openLedger({ storeUri: t.uri, backoff: FAST });
    // An uncertain record: the service's answer was lost, so the identity must be reused.
    const lost = scriptedSend([serviceError(503, "TEMPORARILY_UNAVAILABLE")]);
    const first = await ledger
      .run({ ...req, maxAttempts: 1 }, lost.send, lost.ref)
      .catch((e: { identity?: string }) => e);
    expect(first.identity).toMatch(/^gm-/);
    for (const suffix of ["", "-wal", "-shm"]) unlinkSync(`${t.path}${suffix}`);

    const s = scriptedSend([{ taskId: "t5" }, { taskId: "t5" }]);
    const err = await ledger.run({ ...req, bytes: "{}" }, s.send, s.ref).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect(err).toMatchObject({ code: "LEDGER_FILE_GONE" });
    expect((err as Error).message).toMatch(
      /nothing was sent: the ledger file .* was deleted while the server ran; the requests it recorded were written back to /,
    );
    expect((err as LedgerError).action).toMatch(/^Restart the MCP server: it reopens /);
    // The identical call, too, until the restart: the file now on the path is not the one open.
    await expect(ledger.run(req, s.send, s.ref)).rejects.toMatchObject({ code: "LEDGER_FILE_GONE" });
    expect(s.calls).toHaveLength(0);
    await ledger.close();

    // The restart opens the written-back file: the identical call resumes the uncertain identity.
    const again = await openLedger({ storeUri: t.uri, backoff: FAST });
    const resumed = await again.run(req, s.send, s.ref);
    expect(resumed.identity).toBe(first.identity);
    expect(resumed.reused).toBe(true);
    expect(s.calls).toHaveLength(1);
    await again.close();
  });

  it("notices a different file moved onto the path, and writes its records beside it", async () => {
    const ledger = await openLedger({ storeUri: t.uri, backoff: FAST });
    const lost = scriptedSend([serviceError(503, "TEMPORARILY_UNAVAILABLE")]);
    const first = await ledger
      .run({ ...req, maxAttempts: 1 }, lost.send, lost.ref)
      .catch((e: { identity?: string }) => e);
    writeFileSync(join(t.dir, "other.sqlite"), "");
    renameSync(join(t.dir, "other.sqlite"), t.path);
    const s = scriptedSend([{ taskId: "t6" }]);
    const err = await ledger.run(req, s.send, s.ref).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/replaced by another file/);
    expect(s.calls).toHaveLength(0);
    const copy = /were written to (\S+) beside it/.exec((err as Error).message)?.[1] ?? "";
    expect(copy).toMatch(/ledger\.sqlite\.recovered-/);
    expect((err as LedgerError).action).toContain(`move ${copy} to ${t.path}`);
    await ledger.close();
    // The copy is a whole ledger holding the uncertain record.
    const fromCopy = await openLedger({ storeUri: `sqlite://${copy}`, backoff: FAST });
    expect((await fromCopy.list(keyHash)).map((r) => [r.idempotencyKey, r.state])).toEqual([
      [first.identity, "uncertain"],
    ]);
    await fromCopy.close();
  });
});

describe("the SQLite driver", () => {
  it("is node:sqlite; a URI written for the old driver choice opens, one naming sqlite3 is refused", async () => {
    const ledger = await openLedger({ storeUri: withParam(t.uri, "driver=node") });
    expect(ledger.description).toContain("sqlite via node:sqlite (WAL, synchronous=FULL");
    await ledger.close();
    for (const driver of ["sqlite3", "mysql"]) {
      const err = await openLedger({ storeUri: withParam(t.uri, `driver=${driver}`) }).catch(
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: "LEDGER_CONFIG" });
      expect((err as Error).message).toMatch(/driver: the only SQLite driver is node/);
    }
  });

  it("on a Node without node:sqlite, names this Node and says to upgrade, never to report it", () => {
    const err = new NoSqliteDriverError();
    expect(err).toMatchObject({ code: "LEDGER_NO_SQLITE", action: NO_DRIVER_ACTION });
    expect(err.message).toContain(`Node ${process.versions.node} has no node:sqlite`);
    expect(NO_DRIVER_ACTION).toMatch(/^Upgrade Node\.js to 22\.13 or newer/);
    expect(NO_DRIVER_ACTION).not.toMatch(/sqlite3|report/i);
  });
});
