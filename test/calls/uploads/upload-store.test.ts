/**
 * The media viewer's upload store (src/calls/uploads/upload-store.ts, upload-slots.ts) on the
 * ledger's shared store, SQLite, PostgreSQL and Redis, each with two stores open on one back end as
 * two replicas have them: chunks taken by either, every bound checked before a byte is written and
 * counted for the deployment, parallel opens racing for the last slots, chunk 0 first and the rest
 * in any order (several at once, on both replicas, sent once), each of its length, a resent chunk stored once, one key's uploads invisible to another, idle uploads
 * dropped with their bytes, and the idle time renewed only by accepted bytes.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  chunkCount,
  DEFAULT_UPLOAD_LIMITS,
  UPLOAD_CHUNK_BYTES,
  type UploadLimits,
  UploadStore,
} from "../../../src/calls/uploads/upload-store.js";
import type { ChunkStore } from "../../../src/ledger/chunk-store.js";
import { type KeyedStore, openStore } from "../../../src/ledger/open-ledger.js";
import type { LedgerStore } from "../../../src/ledger/store.js";
import { available, freshStore, STORE_KINDS, type StoreFixture } from "../../ledger/stores.js";

const MiB = 1024 * 1024;
const bytes = (n: number, fill = 7) => Buffer.alloc(n, fill);
/** A chunk as receiveChunk gives it: its decoded bytes. */
const chunkOf = (n: number, fill = 7): [Uint8Array] => [bytes(n, fill)];

describe.each(STORE_KINDS)("the upload store on %s", (kind) => {
  let t: StoreFixture | undefined;
  let opened: LedgerStore[] = [];
  let kv: KeyedStore[] = [];
  let chunks: ChunkStore[] = [];
  beforeEach(async (ctx) => {
    if (!(await available(kind))) return ctx.skip();
    t = await freshStore(kind);
    for (let i = 0; i < 2; i++) opened.push(await openStore(t.uri));
    kv = opened.map((s) => s.keyed());
    chunks = opened.map((s) => s.chunks());
  });
  afterEach(async () => {
    await Promise.all(opened.map((s) => s.close()));
    opened = [];
    await t?.cleanup();
  });
  /** Two replicas' stores over one back end. */
  const replicas = (limits: Partial<UploadLimits> = {}) =>
    kv.map(
      (k, i) => new UploadStore<string>(k, chunks[i] as ChunkStore, { ...DEFAULT_UPLOAD_LIMITS, ...limits }),
    );

  it("takes chunks on either replica in order and of their length, then holds exactly the file until finished", async () => {
    const [a, b] = replicas() as [UploadStore<string>, UploadStore<string>];
    const size = 2 * UPLOAD_CHUNK_BYTES + 100;
    const u = await a.open("alice", size, "clip.mp4", "asset");
    expect(chunkCount(size)).toBe(3);
    expect(await a.append(u, 0, ...chunkOf(UPLOAD_CHUNK_BYTES, 1))).toBe("stored");
    const there = await b.get("alice", u.id);
    expect(await b.append(there, 1, ...chunkOf(UPLOAD_CHUNK_BYTES, 2))).toBe("stored");
    expect(there.state).toBe("receiving");
    expect(await a.usage("alice")).toEqual({ uploads: 1, bytes: 2 * UPLOAD_CHUNK_BYTES });
    const back = await a.get("alice", u.id);
    await a.append(back, 2, ...chunkOf(100, 3));
    expect(back.state).toBe("sending");
    const read = (seq: number) => b.chunk(back, seq);
    const file = Buffer.concat([await read(0), await read(1), await read(2)]);
    expect(file.byteLength).toBe(size);
    expect([file[0], file[UPLOAD_CHUNK_BYTES], file[size - 1]]).toEqual([1, 2, 3]);
    await b.finish(back, { ok: true });
    await expect
      .poll(() =>
        read(2).then(
          () => "held",
          () => "gone",
        ),
      )
      .toBe("gone");
    expect((await a.get("alice", u.id)).outcome).toEqual({ ok: true });
    expect(await a.usage()).toEqual({ uploads: 0, bytes: 0 });
  });

  it("stores a chunk sent twice at once (here and on another replica) once, and answers both where it stands", async () => {
    const [a, b] = replicas() as [UploadStore<string>, UploadStore<string>];
    const u = await a.open("alice", UPLOAD_CHUNK_BYTES + 10, undefined, "asset");
    const copy = await b.get("alice", u.id);
    const both = await Promise.all([
      a.append(u, 0, ...chunkOf(UPLOAD_CHUNK_BYTES)),
      b.append(copy, 0, ...chunkOf(UPLOAD_CHUNK_BYTES)),
    ]);
    expect(both.sort()).toEqual(["repeat", "stored"]);
    expect([u.received, copy.received]).toEqual([UPLOAD_CHUNK_BYTES, UPLOAD_CHUNK_BYTES]);
    // The upload goes on from there.
    expect(await a.append(u, 1, ...chunkOf(10))).toBe("stored");
    expect(u.state).toBe("sending");
  });

  it("takes the chunks after chunk 0 in any order, several at once on both replicas, and sends once", async () => {
    const [a, b] = replicas() as [UploadStore<string>, UploadStore<string>];
    const count = 9;
    const size = (count - 1) * UPLOAD_CHUNK_BYTES + 77;
    const u = await a.open("alice", size, "song.mp3", "asset");
    expect(await a.append(u, 0, ...chunkOf(UPLOAD_CHUNK_BYTES, 0))).toBe("stored");
    // Chunks 8 down to 1, all at once, alternating replicas, each from its own read of the record,
    // and chunk 5 twice: every one held once, and exactly one call moves the upload to "sending".
    const order = [8, 3, 5, 1, 7, 5, 2, 6, 4];
    const calls = order.map(async (seq, i) => {
      const store = i % 2 ? a : b;
      const mine = await store.get("alice", u.id);
      const n = seq === count - 1 ? 77 : UPLOAD_CHUNK_BYTES;
      const how = await store.append(mine, seq, ...chunkOf(n, seq));
      return { how, sending: how === "stored" && mine.state === "sending" };
    });
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o.how === "repeat")).toHaveLength(1);
    expect(outcomes.filter((o) => o.sending)).toHaveLength(1);
    const now = await b.get("alice", u.id);
    expect([now.state, now.received, now.next]).toEqual(["sending", size, count]);
    const file = Buffer.concat(
      await Promise.all(Array.from({ length: count }, (_, seq) => a.chunk(now, seq))),
    );
    expect(file.byteLength).toBe(size);
    for (let seq = 0; seq < count; seq++) expect(file[seq * UPLOAD_CHUNK_BYTES]).toBe(seq);
  });

  it("refuses a chunk before chunk 0, past the last or of the wrong length, dropping the upload's bytes", async () => {
    const [s] = replicas() as [UploadStore<string>];
    const cases: Array<[number, number, RegExp]> = [
      [
        1,
        UPLOAD_CHUNK_BYTES,
        /^seq: chunk 1 arrived before chunk 0; chunk 0 goes first, then the rest in any order/,
      ],
      [4, UPLOAD_CHUNK_BYTES, /^seq: chunk 4 is past the last one \(2\)/],
      [0, UPLOAD_CHUNK_BYTES + 1, /^data: chunk 0 holds 524289 bytes where 524288 belong/],
    ];
    for (const [seq, n, refusal] of cases) {
      const u = await s.open("alice", 2 * UPLOAD_CHUNK_BYTES + 1, undefined, "asset");
      await expect(s.append(u, seq, ...chunkOf(n))).rejects.toThrow(refusal);
      await expect(s.get("alice", u.id)).rejects.toThrow(/is not an upload in progress here/);
    }
    expect(await s.usage()).toEqual({ uploads: 0, bytes: 0 });
    // The last chunk holds the rest, not a whole chunk's worth.
    const u = await s.open("alice", UPLOAD_CHUNK_BYTES + 10, undefined, "asset");
    await s.append(u, 0, ...chunkOf(UPLOAD_CHUNK_BYTES));
    await expect(s.append(u, 1, ...chunkOf(UPLOAD_CHUNK_BYTES))).rejects.toThrow(
      /holds 524288 bytes where 10 belong/,
    );
  });

  it("finds an upload only under the key that opened it, and answers another key as for one never made", async () => {
    const [s] = replicas() as [UploadStore<string>];
    const u = await s.open("alice", 10, "a.png", "asset");
    const why = (p: Promise<unknown>) =>
      p.then(
        () => "",
        (err: Error) => err.message,
      );
    const stranger = await why(s.get("mallory", u.id));
    const madeUp = await why(s.get("mallory", "upl_nothing"));
    expect(stranger.replace(u.id, "ID")).toBe(madeUp.replace("upl_nothing", "ID"));
    const mine = await s.get("alice", u.id);
    await s.append(mine, 0, ...chunkOf(10));
    expect(mine.state).toBe("sending");
  });

  it("bounds each user's uploads and bytes, and the deployment's across replicas, naming the limit and when to retry", async () => {
    const limits = { perUserUploads: 2, perUserBytes: 40 * MiB, totalUploads: 3, totalBytes: 70 * MiB };
    const [a, b] = replicas(limits) as [UploadStore<string>, UploadStore<string>];
    await a.open("alice", 30 * MiB, undefined, "asset");
    await expect(b.open("alice", 11 * MiB, undefined, "asset")).rejects.toThrow(
      /^Your uploads in progress would declare 41 MiB \(the limit is 40 MiB per user\); nothing was stored or sent/,
    );
    await b.open("alice", 10 * MiB, undefined, "asset");
    const refused = await a
      .open("alice", 1, undefined, "asset")
      .catch((e: { action: string; message: string }) => e);
    expect(refused).toMatchObject({
      message: expect.stringMatching(/^You have 2 uploads in progress \(the limit is 2 at once\)/),
      action: expect.stringMatching(/^Retry in about 300 s, when the soonest idle one is dropped/),
    });
    // Bob has room of his own, until the deployment's total is reached on either replica.
    await expect(b.open("bob", 31 * MiB, undefined, "asset")).rejects.toThrow(
      /^This server is holding as many uploads as it allows at once \(the limit is 3 uploads and 70 MiB in all\)/,
    );
    await a.open("bob", 30 * MiB, undefined, "asset");
    await expect(b.open("carol", 1, undefined, "asset")).rejects.toThrow(/^This server is holding/);
    // Nothing of any upload was written: no byte received anywhere.
    expect(await a.usage()).toEqual({ uploads: 3, bytes: 0 });
  });

  it("parallel opens on two replicas never overshoot a bound: exactly the allowed number get a slot", async () => {
    const limits = { perUserUploads: 3, totalUploads: 5 };
    const [a, b] = replicas(limits) as [UploadStore<string>, UploadStore<string>];
    const opens = (owner: string, n: number) =>
      Array.from({ length: n }, (_, i) => (i % 2 ? a : b).open(owner, 1000, undefined, "asset"));
    const mine = await Promise.allSettled(opens("alice", 10));
    expect(mine.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    const all = await Promise.allSettled([...opens("bob", 4), ...opens("carol", 4)]);
    expect(all.filter((r) => r.status === "fulfilled")).toHaveLength(2);
    expect(await a.usage()).toEqual({ uploads: 5, bytes: 0 });
    expect((await b.usage("alice")).uploads).toBe(3);
  });

  it("drops an upload that accepts no bytes for its idle time, however often it is asked about or refused", async () => {
    const [a, b] = replicas({ perUserUploads: 1, idleMs: 800 }) as [UploadStore<string>, UploadStore<string>];
    const idle = await a.open("alice", UPLOAD_CHUNK_BYTES + 1, undefined, "asset");
    const until = Date.now() + 1000;
    // Calls that bring no byte (an ID alone, as issue 30 found them renewing it) change nothing.
    while (Date.now() < until) {
      await b.get("alice", idle.id).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 50));
    }
    await expect(a.get("alice", idle.id)).rejects.toThrow(/not an upload in progress/);
    // Its slot is free for the next: nothing held with zero bytes.
    await b.open("alice", 10, undefined, "asset");
    expect((await a.usage()).uploads).toBe(1);
    // Progress renews the idle time: a chunk every 350 ms keeps an 800 ms upload alive past 800 ms.
    const slow = await a.open("bob", 3 * UPLOAD_CHUNK_BYTES, undefined, "asset");
    for (let seq = 0; seq < 3; seq++) {
      await new Promise((r) => setTimeout(r, 350));
      await a.append(slow, seq, ...chunkOf(UPLOAD_CHUNK_BYTES));
    }
    expect(slow.state).toBe("sending");
    expect((await b.get("bob", slow.id)).state).toBe("sending");
  });
});
