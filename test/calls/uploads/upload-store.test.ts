/**
 * The media viewer's upload store (src/calls/uploads/upload-store.ts): every bound checked before a byte
 * is written, chunks only in order and of their length, one key's uploads invisible to another,
 * idle uploads dropped with their bytes, files private to this process's user.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  chunkCount,
  DEFAULT_UPLOAD_LIMITS,
  UPLOAD_CHUNK_BYTES,
  type UploadLimits,
  UploadStore,
} from "../../../src/calls/uploads/upload-store.js";
import { type TempDir, tempDir } from "../../helpers/temp.js";

const MiB = 1024 * 1024;
let tmp: TempDir;
let clock = 0;
const store = (limits: Partial<UploadLimits> = {}) => {
  tmp = tempDir();
  clock = 1_000_000;
  return new UploadStore<string>({ ...DEFAULT_UPLOAD_LIMITS, ...limits }, () => clock, tmp.dir);
};
afterEach(() => tmp?.cleanup());

/** Every file the store holds on disk. */
const held = (): string[] =>
  readdirSync(tmp.dir).flatMap((d) =>
    readdirSync(path.join(tmp.dir, d)).map((f) => path.join(tmp.dir, d, f)),
  );

const bytes = (n: number, fill = 7) => new Uint8Array(n).fill(fill);

describe("UploadStore", () => {
  it("stores chunks in order and of their length, then holds exactly the file, private to this user", async () => {
    const s = store();
    const size = 2 * UPLOAD_CHUNK_BYTES + 100;
    const u = await s.open("alice", size, "clip.mp4", "asset");
    expect(chunkCount(size)).toBe(3);
    await s.append(u, 0, bytes(UPLOAD_CHUNK_BYTES, 1));
    await s.append(u, 1, bytes(UPLOAD_CHUNK_BYTES, 2));
    expect(u.state).toBe("receiving");
    expect(s.usage("alice")).toEqual({ uploads: 1, bytes: 2 * UPLOAD_CHUNK_BYTES });
    await s.append(u, 2, bytes(100, 3));
    expect(u.state).toBe("sending");
    const file = readFileSync(u.file);
    expect(file.byteLength).toBe(size);
    expect([file[0], file[UPLOAD_CHUNK_BYTES], file[size - 1]]).toEqual([1, 2, 3]);
    expect(statSync(u.file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(u.file)).mode & 0o777).toBe(0o700);
    await s.finish(u);
    expect(held()).toEqual([]);
    expect(s.usage()).toEqual({ uploads: 0, bytes: 0 });
  });

  it("refuses a chunk out of order, past the last, of the wrong length or while another is stored, dropping the upload's bytes", async () => {
    const s = store();
    const cases: Array<[(u: Awaited<ReturnType<typeof s.open>>) => Promise<void>, RegExp]> = [
      [(u) => s.append(u, 1, bytes(UPLOAD_CHUNK_BYTES)), /^seq: chunk 1 arrived where chunk 0 comes next/],
      [(u) => s.append(u, 4, bytes(UPLOAD_CHUNK_BYTES)), /^seq: chunk 4 is past the last one \(2\)/],
      [
        (u) => s.append(u, 0, bytes(UPLOAD_CHUNK_BYTES + 1)),
        /^data: chunk 0 holds 524289 bytes where 524288 belong/,
      ],
      [
        async (u) => {
          const first = s.append(u, 0, bytes(UPLOAD_CHUNK_BYTES)).catch(() => {});
          const second = s.append(u, 1, bytes(UPLOAD_CHUNK_BYTES));
          await first;
          await second;
        },
        /^seq: chunk 1 arrived while another chunk was being stored/,
      ],
    ];
    for (const [send, refusal] of cases) {
      const u = await s.open("alice", 2 * UPLOAD_CHUNK_BYTES + 1, undefined, "asset");
      await expect(send(u)).rejects.toThrow(refusal);
      expect(held(), String(refusal)).toEqual([]);
      expect(() => s.get("alice", u.id)).toThrow(/is not an upload in progress here/);
    }
    // The last chunk holds the rest, not a whole chunk's worth.
    const u = await s.open("alice", UPLOAD_CHUNK_BYTES + 10, undefined, "asset");
    await s.append(u, 0, bytes(UPLOAD_CHUNK_BYTES));
    await expect(s.append(u, 1, bytes(UPLOAD_CHUNK_BYTES))).rejects.toThrow(
      /holds 524288 bytes where 10 belong/,
    );
  });

  it("finds an upload only under the key that opened it, and answers another key as for one never made", async () => {
    const s = store();
    const u = await s.open("alice", 10, "a.png", "asset");
    const stranger = (() => {
      try {
        s.get("mallory", u.id);
      } catch (err) {
        return (err as Error).message;
      }
    })();
    const madeUp = (() => {
      try {
        s.get("mallory", "upl_nothing");
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(stranger?.replace(u.id, "ID")).toBe(madeUp?.replace("upl_nothing", "ID"));
    // Still Alice's, untouched.
    expect(s.get("alice", u.id)).toBe(u);
    await s.append(u, 0, bytes(10));
    expect(u.state).toBe("sending");
  });

  it("bounds each user's uploads and bytes, and the server's, before writing anything", async () => {
    const s = store({ perUserUploads: 2, perUserBytes: 40 * MiB, totalUploads: 3, totalBytes: 70 * MiB });
    await s.open("alice", 30 * MiB, undefined, "asset");
    await expect(s.open("alice", 11 * MiB, undefined, "asset")).rejects.toThrow(
      /^Your uploads in progress would hold 41 MiB \(the limit is 40 MiB\); nothing was stored or sent/,
    );
    await s.open("alice", 10 * MiB, undefined, "asset");
    await expect(s.open("alice", 1, undefined, "asset")).rejects.toThrow(
      /^You have 2 uploads in progress \(the limit is 2 at once\)/,
    );
    // Bob has room of his own, until the server's total is reached.
    await expect(s.open("bob", 31 * MiB, undefined, "asset")).rejects.toThrow(
      /^This server is holding as many uploads/,
    );
    await s.open("bob", 30 * MiB, undefined, "asset");
    await expect(s.open("carol", 1, undefined, "asset")).rejects.toThrow(
      /^This server is holding as many uploads/,
    );
    // Nothing was written for any of them: files exist, empty.
    expect(held().map((f) => statSync(f).size)).toEqual([0, 0, 0]);
  });

  it("drops an idle upload with its bytes, keeps one being sent, and forgets an outcome after a while", async () => {
    const s = store({ idleMs: 1000, keepMs: 5000 });
    const idle = await s.open("alice", UPLOAD_CHUNK_BYTES + 1, undefined, "asset");
    await s.append(idle, 0, bytes(UPLOAD_CHUNK_BYTES));
    const sending = await s.open("alice", 5, undefined, "asset");
    await s.append(sending, 0, bytes(5));
    const done = await s.open("bob", 5, undefined, "voice");
    await s.append(done, 0, bytes(5));
    await s.finish(done);
    clock += 1001;
    s.sweep();
    expect(() => s.get("alice", idle.id)).toThrow(/not an upload in progress/);
    expect(s.get("alice", sending.id).state).toBe("sending");
    expect(s.get("bob", done.id).state).toBe("finished");
    // The idle upload's file is removed in the background: wait for that, not for a set time.
    await vi.waitFor(() => expect(held()).toEqual([sending.file]));
    clock += 5001;
    s.sweep();
    expect(() => s.get("bob", done.id)).toThrow(/not an upload in progress/);
    expect(s.get("alice", sending.id).state).toBe("sending");
  });
});
