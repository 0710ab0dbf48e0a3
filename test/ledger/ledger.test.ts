import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConnectionError, IncompleteStreamError, UnreachableError } from "../../src/client/service-errors.js";
import {
  hashKey,
  IdentifiedError,
  type Ledger,
  LedgerError,
  openLedger,
} from "../../src/ledger/open-ledger.js";
import { connect } from "../../src/ledger/stores/sqlite-connection.js";
import { API_KEY, BODY, fastLedger, OTHER_KEY, STORE, scriptedSend, serviceError } from "./ledger-helpers.js";
import { available, freshStore, type StoreFixture } from "./stores.js";

const keyHash = hashKey(API_KEY);
const req = { keyHash, tool: "generate_image", endpoint: "/api/generate/image", bytes: BODY };
const IDENTITY = /^[a-zA-Z0-9_.:-]{1,128}$/;

let t: StoreFixture;
let ledger: Ledger;
let opened = false;
beforeEach(async (ctx) => {
  if (!(await available(STORE))) return ctx.skip();
  t = await freshStore(STORE);
  ledger = await fastLedger(t.uri);
  opened = true;
});
afterEach(async () => {
  if (!opened) return;
  opened = false;
  await ledger.close();
  await t.cleanup();
});

describe("hashKey", () => {
  it("is a domain-separated sha256, not the plain hash of the key", async () => {
    const { createHash } = await import("node:crypto");
    expect(keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(keyHash).not.toBe(createHash("sha256").update(API_KEY).digest("hex"));
    expect(hashKey(OTHER_KEY)).not.toBe(keyHash);
  });
});

describe("run: outcomes through the state machine", () => {
  it("commits the record before sending, then records the success as not yet delivered", async () => {
    const seen: unknown[] = [];
    const out = await ledger.run(
      req,
      async (identity, bytes) => {
        // A second ledger on the same file sees the durable record while the request is on the wire.
        const other = await openLedger({ storeUri: t.uri });
        seen.push(await other.list(keyHash));
        await other.close();
        expect(bytes).toBe(BODY);
        return { taskId: `task-for-${identity}` };
      },
      (r) => ({ taskId: r.taskId }),
    );
    expect(out.identity).toMatch(IDENTITY);
    expect(out.reused).toBe(false);
    expect(seen[0]).toMatchObject([{ idempotencyKey: out.identity, state: "sent", attempts: 1 }]);
    const [rec] = await ledger.list(keyHash);
    expect(rec).toMatchObject({
      idempotencyKey: out.identity,
      tool: "generate_image",
      state: "succeeded",
      taskId: `task-for-${out.identity}`,
      delivered: false,
      attempts: 1,
    });
    expect(rec?.expiresAt).toBeUndefined();
    expect(Date.parse(rec?.createdAt ?? "")).not.toBeNaN();
  });

  it("replays an uncertain outcome under the same identity with the same bytes", async () => {
    const s = scriptedSend([
      serviceError(409, "REQUEST_UNCERTAIN"),
      serviceError(503, "PROVIDER_UNAVAILABLE"),
      { taskId: "t1" },
    ]);
    const attempts: Array<[number, unknown]> = [];
    const out = await ledger.run({ ...req, onAttempt: (n, e) => attempts.push([n, e]) }, s.send, s.ref);
    expect(s.calls).toHaveLength(3);
    expect(new Set(s.calls.map((c) => c.identity))).toEqual(new Set([out.identity]));
    expect(s.calls.every((c) => c.bytes === BODY)).toBe(true);
    expect(attempts.map(([n]) => n)).toEqual([1, 2, 3]);
    expect(attempts[1]?.[1]).toMatchObject({ code: "REQUEST_UNCERTAIN" });
    expect((await ledger.list(keyHash))[0]).toMatchObject({ state: "succeeded", attempts: 3, taskId: "t1" });
  });

  it("treats network failures, broken streams and unknown errors as uncertain", async () => {
    const s = scriptedSend([
      new ConnectionError({ message: "socket hang up", requestKind: "submission" }),
      new IncompleteStreamError({ status: 200, code: undefined, message: "no [DONE]" }, "partial"),
      new TypeError("something odd"),
      { taskId: "t2" },
    ]);
    const out = await ledger.run(req, s.send, s.ref);
    expect(s.calls.map((c) => c.identity)).toEqual([out.identity, out.identity, out.identity, out.identity]);
  });

  it("on exhaustion keeps the record uncertain and throws the last error with the identity", async () => {
    const s = scriptedSend([serviceError(500, "SERVER_ERROR")]);
    const err = await ledger.run({ ...req, maxAttempts: 3 }, s.send, s.ref).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdentifiedError);
    expect((err as IdentifiedError).cause).toMatchObject({ code: "SERVER_ERROR", status: 500 });
    expect(err).toMatchObject({ state: "uncertain" });
    const identity = (err as IdentifiedError).identity;
    expect(identity).toMatch(IDENTITY);
    expect(s.calls).toHaveLength(3);
    expect((await ledger.list(keyHash))[0]).toMatchObject({
      idempotencyKey: identity,
      state: "uncertain",
      attempts: 3,
      lastError: { status: 500, code: "SERVER_ERROR" },
    });
    // The next identical call resumes it: never a new identity while the outcome is unknown.
    const ok = scriptedSend([{ taskId: "t3" }]);
    const out = await ledger.run(req, ok.send, ok.ref);
    expect(out).toMatchObject({ identity, reused: true });
    expect((await ledger.list(keyHash))[0]).toMatchObject({ state: "succeeded", attempts: 4 });
  });

  it("closes a record none of whose attempts left (connection refused), but not one that may have", async () => {
    const refused = () => new UnreachableError({ message: "ECONNREFUSED", requestKind: "submission" });
    const never = scriptedSend([refused()]);
    const err = await ledger.run({ ...req, maxAttempts: 3 }, never.send, never.ref).catch((e: unknown) => e);
    expect(never.calls).toHaveLength(3);
    expect(err).toMatchObject({ state: "closed" });
    expect((await ledger.list(keyHash))[0]).toMatchObject({
      state: "closed",
      closedReason: { code: "SERVICE_UNREACHABLE" },
    });
    // A later identical call is a new request, under a new identity.
    const ok = scriptedSend([{ taskId: "t4" }]);
    const out = await ledger.run(req, ok.send, ok.ref);
    expect(out.identity).not.toBe((err as IdentifiedError).identity);

    // An attempt that may have reached the service (a reset), then refusals: still uncertain.
    const mixed = scriptedSend([
      new ConnectionError({ message: "socket hang up", requestKind: "submission" }),
      refused(),
    ]);
    const other = { ...req, bytes: '{"n":2}' };
    const uncertain = await ledger
      .run({ ...other, maxAttempts: 3 }, mixed.send, mixed.ref)
      .catch((e: unknown) => e);
    expect(uncertain).toMatchObject({ state: "uncertain" });
    // A resumed uncertain record stays so, though this call's attempts were all refused.
    const again = scriptedSend([refused()]);
    const resumed = await ledger
      .run({ ...other, maxAttempts: 2 }, again.send, again.ref)
      .catch((e: unknown) => e);
    expect(resumed).toMatchObject({ state: "uncertain", identity: (uncertain as IdentifiedError).identity });
  });

  it("stops replaying when the time budget would be exceeded", async () => {
    const s = scriptedSend([serviceError(409, "REQUEST_UNCERTAIN", 5_000)]);
    const slow = await fastLedger(t.uri, { backoff: { retryAfterCapMs: 60_000 } });
    const err = await slow
      .run({ ...req, maxAttempts: 10, maxElapsedMs: 1_000 }, s.send, s.ref)
      .catch((e: unknown) => e);
    await slow.close();
    expect(s.calls).toHaveLength(1);
    expect((err as { identity?: string }).identity).toBe(s.calls[0]?.identity);
  });

  it("replays REFERENCES_PROCESSING under the same identity until the references are ready", async () => {
    const s = scriptedSend([
      serviceError(409, "REFERENCES_PROCESSING"),
      serviceError(409, "REFERENCES_PROCESSING"),
      { taskId: "t4" },
    ]);
    const out = await ledger.run(req, s.send, s.ref);
    expect(s.calls.map((c) => c.identity)).toEqual([out.identity, out.identity, out.identity]);
  });

  it("closes on REQUEST_FAILED, and an identical later call gets a new identity", async () => {
    const s = scriptedSend([serviceError(409, "REQUEST_FAILED")]);
    const err = await ledger.run(req, s.send, s.ref).catch((e: unknown) => e);
    expect((err as IdentifiedError).cause).toMatchObject({ code: "REQUEST_FAILED" });
    expect(err).toMatchObject({ state: "closed" });
    const first = (err as IdentifiedError).identity;
    expect(s.calls).toHaveLength(1);
    const [rec] = await ledger.list(keyHash);
    expect(rec).toMatchObject({ state: "closed", closedReason: { status: 409, code: "REQUEST_FAILED" } });
    expect(rec?.expiresAt).toBeDefined();
    const ok = scriptedSend([{ taskId: "t5" }]);
    const out = await ledger.run(req, ok.send, ok.ref);
    expect(out.reused).toBe(false);
    expect(out.identity).not.toBe(first);
    expect(ok.calls[0]?.identity).toBe(out.identity);
  });

  it("retains ANALYSIS_FAILED: closed without replaying, and an identical later call reuses the identity", async () => {
    const s = scriptedSend([serviceError(409, "ANALYSIS_FAILED"), serviceError(409, "ANALYSIS_FAILED")]);
    const first = await ledger.run(req, s.send, s.ref).catch((e: unknown) => e);
    expect(first).toMatchObject({ cause: { code: "ANALYSIS_FAILED" } });
    expect(s.calls).toHaveLength(1);
    const [rec] = await ledger.list(keyHash);
    expect(rec).toMatchObject({ state: "closed", closedReason: { status: 409, code: "ANALYSIS_FAILED" } });
    const again = await ledger.run(req, s.send, s.ref).catch((e: unknown) => e);
    const identity = (first as { identity: string }).identity;
    expect(again).toMatchObject({ cause: { code: "ANALYSIS_FAILED" }, identity });
    expect(s.calls.map((c) => c.identity)).toEqual([identity, identity]);
    expect(s.calls[1]?.bytes).toBe(BODY);
    // A different explicit key is new work.
    const ok = scriptedSend([{ taskId: "t-new" }]);
    const other = await ledger.run({ ...req, idempotencyKey: "analysis-new" }, ok.send, ok.ref);
    expect(other.identity).toBe("analysis-new");
  });

  it("closes on a definitive rejection such as 422 without replaying", async () => {
    const s = scriptedSend([serviceError(422, "INVALID_REQUEST")]);
    await expect(ledger.run(req, s.send, s.ref)).rejects.toMatchObject({
      cause: { status: 422, code: "INVALID_REQUEST" },
    });
    expect(s.calls).toHaveLength(1);
    expect(await ledger.list(keyHash, { state: "closed" })).toHaveLength(1);
    expect(await ledger.list(keyHash, { state: "open" })).toHaveLength(0);
  });

  it("stops at an abort, leaving the record uncertain with its identity", async () => {
    const ac = new AbortController();
    const s = scriptedSend([serviceError(503, "TEMPORARILY_UNAVAILABLE")]);
    const slow = await fastLedger(t.uri, { backoff: { baseMs: 10_000, capMs: 10_000 }, random: () => 1 });
    setTimeout(() => ac.abort(new Error("cancelled by the client")), 50);
    const err = await slow.run({ ...req, signal: ac.signal }, s.send, s.ref).catch((e: unknown) => e);
    await slow.close();
    expect(s.calls).toHaveLength(1);
    expect((err as { identity: string }).identity).toBe(s.calls[0]?.identity);
    expect((await ledger.list(keyHash))[0]).toMatchObject({ state: "uncertain" });
  });
});

describe("retention and recovery", () => {
  it("expires closed and delivered records after the retention time, never open ones", async () => {
    let now = 1_700_000_000_000;
    const day = 24 * 3600 * 1000;
    const clocked = await fastLedger(t.uri, { now: () => now, retentionMs: day });
    const closed = scriptedSend([serviceError(422, "INVALID_REQUEST")]);
    await clocked.run({ ...req, bytes: '{"n":1}' }, closed.send, closed.ref).catch(() => {});
    const ok = scriptedSend([{ taskId: "kept" }]);
    const delivered = await clocked.run({ ...req, bytes: '{"n":2}' }, ok.send, ok.ref);
    await clocked.markDelivered(keyHash, delivered.identity, true);
    await clocked.run({ ...req, bytes: '{"n":3}' }, ok.send, ok.ref); // succeeded, never delivered
    const lost = scriptedSend([serviceError(503, "TEMPORARILY_UNAVAILABLE")]);
    await clocked.run({ ...req, bytes: '{"n":4}', maxAttempts: 1 }, lost.send, lost.ref).catch(() => {});
    await clocked.close();

    now += 30 * day;
    const later = await fastLedger(t.uri, { now: () => now, retentionMs: day });
    const left = await later.list(keyHash);
    expect(left.map((r) => r.state).sort()).toEqual(["succeeded", "uncertain"]);
    expect(left.every((r) => r.expiresAt === undefined)).toBe(true);
    expect(later.recovered.map((r) => r.state).sort()).toEqual(["succeeded", "uncertain"]);
    expect(later.recovered.every((r) => r.keyHash === keyHash)).toBe(true);
    await later.close();
    if (STORE !== "sqlite") return;
    // The expired rows are gone from the file, not just hidden.
    const db = await connect(t.uri.replace(/^sqlite:\/\//, "").replace(/\?.*$/, ""));
    const rows = await db.query("SELECT key FROM ledger WHERE key LIKE 'ledger:rec:%'");
    const index = await db.query("SELECT key FROM ledger WHERE key LIKE 'ledger:idx:%'");
    await db.close();
    expect(rows).toHaveLength(2);
    expect(index).toHaveLength(2);
  });
});

describe.runIf(STORE === "sqlite")("opening the store", () => {
  it("runs SQLite in WAL with synchronous=FULL", async () => {
    const db = await connect(t.uri.replace(/^sqlite:\/\//, "").replace(/\?.*$/, ""));
    const mode = (await db.query("PRAGMA journal_mode")).map((r) => ({ ...r }));
    await db.close();
    expect(mode).toEqual([{ journal_mode: "wal" }]);
    expect(ledger.description).toContain("synchronous=FULL");
  });

  it("refuses an unreachable or unknown store without echoing the URI", async () => {
    // Nothing listens on port 1: the open fails, and says so without the password.
    const err = await openLedger({ storeUri: "redis://user:s3cret@127.0.0.1:1" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as Error).message).toContain("cannot open the redis ledger");
    expect((err as Error).message).not.toContain("s3cret");
    expect(JSON.stringify(err)).not.toContain("s3cret");
    const pg = await openLedger({ storeUri: "postgres://user:s3cret@127.0.0.1:1/db" }).catch(
      (e: unknown) => e,
    );
    expect(pg).toBeInstanceOf(LedgerError);
    expect((pg as Error).message).toContain("cannot open the postgres ledger");
    expect((pg as Error).message).not.toContain("s3cret");
    await expect(openLedger({ storeUri: "ftp://x" })).rejects.toThrow(/unsupported store ftp/);
    await expect(openLedger({ storeUri: "sqlite://:memory:" })).rejects.toThrow(
      /would not survive a restart/,
    );
  });
});
