/**
 * Which writes may ride on the next durable commit (src/ledger/writes.ts): only those that leave a
 * record `succeeded` (the answer, its delivered mark), whose loss a replay under the same identity
 * repairs at no charge. Every other write, and every claim, syncs as it lands. And the SQLite
 * store commits a deferred write visibly, then goes back to synchronous=FULL, even when it fails.
 */
import { afterEach, describe, expect, it } from "vitest";
import { freshRecord } from "../../src/ledger/checks.js";
import type { StoredRecord } from "../../src/ledger/record.js";
import type { LedgerStore } from "../../src/ledger/store.js";
import { SqliteStore } from "../../src/ledger/stores/sqlite.js";
import { change, deliveredMark, RecordWriter } from "../../src/ledger/writes.js";
import { tempDir } from "./ledger-helpers.js";

const record = (): StoredRecord =>
  freshRecord(
    { tool: "generate_image", endpoint: "/api/generate/image", keyHash: "k".repeat(64), bytes: "{}" },
    "gm-test-1",
    "h".repeat(64),
    1_000,
  );

/** A store that keeps one record and says how each write asked to be made durable. */
function recordingStore(start: StoredRecord) {
  let current = start;
  const writes: Array<{ state: string; delivered: boolean; deferred: boolean }> = [];
  const store = {
    get: async () => current,
    replace: async (prev: StoredRecord, next: StoredRecord, o: { deferred?: boolean } = {}) => {
      if (prev.version !== current.version) return false;
      current = next;
      writes.push({ state: next.state, delivered: next.delivered, deferred: o.deferred === true });
      return true;
    },
  } as unknown as LedgerStore;
  return { store, writes };
}

describe("deferred writes", () => {
  it("defers a success and its delivered mark, never a sent, uncertain or closed record", async () => {
    const { store, writes } = recordingStore(record());
    const writer = new RecordWriter(store, { now: () => 2_000, retentionMs: 60_000 });
    let rec = await writer.save(record(), change({ state: "sent", attempts: 1 }));
    rec = await writer.save(rec, change({ state: "uncertain" }));
    rec = await writer.save(rec, change({ state: "succeeded", taskId: "task_1", delivered: false }));
    await writer.save(rec, (cur) => deliveredMark(cur, true, 62_000));

    const closing = recordingStore(record());
    const closer = new RecordWriter(closing.store, { now: () => 2_000, retentionMs: 60_000 });
    await closer.save(record(), change({ state: "closed" }));

    expect(writes).toEqual([
      { state: "sent", delivered: false, deferred: false },
      { state: "uncertain", delivered: false, deferred: false },
      { state: "succeeded", delivered: false, deferred: true },
      { state: "succeeded", delivered: true, deferred: true },
    ]);
    expect(closing.writes).toEqual([{ state: "closed", delivered: false, deferred: false }]);
  });
});

describe("a deferred write in SQLite", () => {
  const t = tempDir();
  let store: SqliteStore | undefined;
  afterEach(async () => {
    await store?.close();
    t.cleanup();
  });

  const synchronous = async (s: SqliteStore) =>
    Number(Object.values((await s.query("PRAGMA synchronous"))[0] ?? {})[0]);

  it("is committed and read back, and the connection is at synchronous=FULL again afterwards", async () => {
    store = await SqliteStore.open(t.uri);
    const claimed = await store.claim({
      keyHash: "k".repeat(64),
      tool: "generate_image",
      bodyHash: "h".repeat(64),
      now: 1_000,
      newIdentity: () => "gm-test-1",
      reusable: () => false,
      fresh: () => record(),
    });
    const next = { ...claimed.record, state: "succeeded" as const, taskId: "task_1", version: 2 };
    expect(await store.replace(claimed.record, next, { deferred: true })).toBe(true);
    expect(await synchronous(store)).toBe(2);
    // A write on a stale version lands nowhere, and still leaves FULL in force.
    expect(await store.replace(claimed.record, { ...next, version: 3 }, { deferred: true })).toBe(false);
    expect(await synchronous(store)).toBe(2);
    await store.close();
    store = await SqliteStore.open(t.uri);
    expect((await store.get("k".repeat(64), "gm-test-1"))?.taskId).toBe("task_1");
  });
});
