/**
 * Where the media viewer's uploads wait for their last chunk (docs/viewer.md#uploads): the ledger's
 * shared store (src/ledger/keyed-store.ts: the SQLite file, PostgreSQL rows or Redis keys, each
 * value with an expiry), so a chunk may reach any replica on that store. An upload is one record
 * under `upl:<key hash>:<id>` and one row of bytes per chunk in the chunk table under the same
 * key hash and ID (src/ledger/chunk-store.ts): found only under the key that
 * opened it (another key's ID reads exactly like one never made), and advanced only by
 * compare-and-set of that record, so chunks after the first land in any order, several at once,
 * and two copies of one chunk (the host resent it while the first was still being written, here
 * or on another replica) store it once and both read where it stands.
 * Every bound (the declared size, how many uploads and bytes a user and the deployment hold: the
 * slots of upload-slots.ts, each chunk's number and length) is checked before a byte is written.
 * Only accepted bytes renew an upload's idle time: a call that is refused or that asks where it
 * stands changes nothing.
 */
import { randomBytes } from "node:crypto";
import type { ChunkStore } from "../../ledger/chunk-store.js";
import type { KeyedStore } from "../../ledger/keyed-store.js";
import { ArgumentError } from "../../shared/local-refusals.js";
import { firstMissing, heldChunks, heldText, isHeld, setHeld } from "./chunks-held.js";
import { DEFAULT_UPLOAD_LIMITS, type Slot, type UploadLimits, UploadSlots } from "./upload-slots.js";

export { DEFAULT_UPLOAD_LIMITS, type UploadLimits } from "./upload-slots.js";

/**
 * Every chunk but the last holds exactly this many bytes (base64: 699,052 characters): one tool
 * call's arguments stay under the 1 MB a host may allow a message (see src/viewer/app/upload-send.ts).
 */
export const UPLOAD_CHUNK_BYTES = 512 * 1024;
/** How long an upload may stay in "sending" before its record lapses (the service's upload bound and more). */
const SENDING_TTL_MS = 60 * 60_000;

export type UploadState = "receiving" | "sending" | "finished";

/** An upload as its record holds it; `raw` is that record's text, the compare-and-set's witness. */
export interface Upload<T = unknown> {
  readonly id: string;
  readonly owner: string;
  readonly size: number;
  readonly name: string | undefined;
  /** What the upload is for (asset or voice): the caller's, kept with it. */
  readonly purpose: T;
  received: number;
  /** The first chunk not yet held. */
  next: number;
  /** Which chunks are held (chunks-held.ts); absent in a record written before chunks came in any order. */
  have?: string;
  state: UploadState;
  /** When it last accepted bytes (or was opened). */
  at: number;
  /** Once finished: what became of it (src/calls/uploads/chunked-upload.ts writes it). */
  outcome?: unknown;
  raw: string;
}

/** How many chunks a file of `size` bytes takes. */
export const chunkCount = (size: number): number => Math.max(1, Math.ceil(size / UPLOAD_CHUNK_BYTES));

/** The exact length chunk `seq` of a `size`-byte file must have. */
export const chunkLength = (size: number, seq: number): number =>
  Math.min(UPLOAD_CHUNK_BYTES, size - seq * UPLOAD_CHUNK_BYTES);

const recordKey = (owner: string, id: string) => `upl:${owner}:${id}`;
/** The chunks' upload name in the chunk table: only the key that opened it ever reaches it. */
const chunksOf = (owner: string, id: string) => `${owner}:${id}`;
type Fields = Omit<Upload<unknown>, "raw" | "id" | "owner">;

const unknownUpload = (id: string) =>
  new ArgumentError(
    "upload",
    `${id.slice(0, 40)} is not an upload in progress here (it finished long ago, accepted no chunk for 5 minutes, or was never started); choose the file again`,
  );

/** What `append` made of a chunk: stored now, or already there (answered as the upload stands). */
export type Appended = "stored" | "repeat";

/**
 * Chunks (src/ledger/chunk-store.ts, binary rows) and the progress of an upload still receiving
 * are written without a sync of their own (keyed-store.ts, `deferred`): a machine that crashes
 * mid-upload loses at most the upload, which the user then chooses again; nothing of it had
 * reached the service, and the synced move to "sending" makes every chunk before it durable.
 */
const LAZY = { deferred: true };
/** Races a chunk may lose to the others landing at once before it gives up (the view sends a few at a time). */
const MAX_SWAPS = 64;
/** How often an open sweeps values past their expiry (the SQL stores keep them until swept). */
const SWEEP_EVERY_MS = 60_000;

export class UploadStore<T = unknown> {
  private readonly slots: UploadSlots;
  private sweptAt = 0;

  constructor(
    private readonly kv: KeyedStore,
    private readonly chunks: ChunkStore,
    private readonly limits: UploadLimits = DEFAULT_UPLOAD_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    this.slots = new UploadSlots(kv, limits, now);
  }

  /** Opens an upload of `size` bytes for `owner` once its slot is claimed; writes no byte yet. */
  async open(owner: string, size: number, name: string | undefined, purpose: T): Promise<Upload<T>> {
    const id = `upl_${randomBytes(16).toString("base64url")}`;
    if (this.now() - this.sweptAt > SWEEP_EVERY_MS) {
      this.sweptAt = this.now();
      void this.kv.sweep(this.sweptAt).catch(() => {});
      void this.chunks.sweep(this.sweptAt).catch(() => {});
    }
    const alive = async (sid: string, slot: Slot) => {
      const u = await this.read(slot.o, sid);
      // A slot claimed a moment ago may not have its record yet (another open's put to come).
      if (u === undefined && this.now() - slot.t < this.limits.idleMs)
        return { live: true, idleAt: slot.t + this.limits.idleMs };
      if (u === undefined || u.state === "finished") return { live: false };
      return u.state === "sending" ? { live: true } : { live: true, idleAt: u.at + this.limits.idleMs };
    };
    await this.slots.reserve(id, owner, size, alive, (sid, slot) => this.forget(slot.o, sid, slot.s));
    const fields: Fields = { size, name, purpose, received: 0, next: 0, state: "receiving", at: this.now() };
    const raw = JSON.stringify(fields);
    try {
      await this.kv.put(recordKey(owner, id), raw, this.limits.idleMs);
    } catch (err) {
      await this.slots.release(id).catch(() => {});
      throw err;
    }
    return { id, owner, ...fields, purpose, raw };
  }

  /** The owner's upload by ID; another key's, a forgotten or a made-up one alike are unknown. */
  async get(owner: string, id: string): Promise<Upload<T>> {
    const u = await this.read(owner, id);
    if (u === undefined) throw unknownUpload(id);
    return u;
  }

  private async read(owner: string, id: string): Promise<Upload<T> | undefined> {
    const raw = await this.kv.get(recordKey(owner, id));
    if (raw === undefined) return undefined;
    const fields = JSON.parse(raw) as Fields & { purpose: T };
    return { id, owner, ...fields, raw };
  }

  /**
   * Stores chunk `seq` (its decoded bytes) after checking its place and length: chunk 0 first (its
   * bytes are the file's type, checked before it is stored), then the others in any order, each
   * UPLOAD_CHUNK_BYTES long but the last (the rest). A chunk already held (its answer was lost, or
   * its first copy is being written right now, here or on another replica) is a "repeat": stored
   * once, answered as the upload stands. Anything else abandons the upload (its bytes deleted) and
   * is refused; nothing of it ever reaches the service. `u` is updated.
   */
  async append(u: Upload<T>, seq: number, bytes: Uint8Array): Promise<Appended> {
    const length = bytes.byteLength;
    const count = chunkCount(u.size);
    const refuse = async (field: string, why: string, drop = true): Promise<never> => {
      if (drop) await this.drop(u);
      const after = drop ? "; the upload was abandoned and nothing was sent: choose the file again" : "";
      throw new ArgumentError(field, `${why}${after}`);
    };
    if (seq >= count)
      return refuse(
        "seq",
        `chunk ${seq} is past the last one (${count - 1}) of a ${u.size}-byte file`,
        u.state === "receiving",
      );
    const held = heldChunks(u.have, u.next, count);
    if (isHeld(held, seq)) return "repeat";
    if (u.state !== "receiving")
      return refuse("seq", `chunk ${seq} arrived after the upload was complete`, false);
    if (seq !== 0 && !isHeld(held, 0))
      return refuse(
        "seq",
        `chunk ${seq} arrived before chunk 0; chunk 0 goes first, then the rest in any order`,
      );
    const want = chunkLength(u.size, seq);
    if (length !== want) {
      return refuse(
        "data",
        `chunk ${seq} holds ${length} bytes where ${want} belong (${UPLOAD_CHUNK_BYTES}-byte chunks, the last one the rest of ${u.size} bytes)`,
      );
    }
    // Both copies of a resent chunk may write it (the same bytes); only one adds it to the record.
    await this.chunks.put(chunksOf(u.owner, u.id), seq, bytes, this.limits.idleMs + SENDING_TTL_MS);
    return this.#hold(u, seq, length, count);
  }

  /**
   * Adds chunk `seq` to the record by compare-and-set, read again after each race (other chunks of
   * the upload land at the same time). The swap that adds the last missing chunk moves the upload
   * to "sending", synced: exactly one call, on one replica, sends it.
   */
  async #hold(u: Upload<T>, seq: number, length: number, count: number): Promise<Appended> {
    for (let tries = 0; tries < MAX_SWAPS; tries++) {
      const held = heldChunks(u.have, u.next, count);
      if (isHeld(held, seq)) return "repeat";
      if (u.state !== "receiving") throw unknownUpload(u.id);
      setHeld(held, seq);
      const next = firstMissing(held, count);
      const done = next === count;
      const fields: Fields = {
        size: u.size,
        name: u.name,
        purpose: u.purpose,
        received: u.received + length,
        next,
        have: heldText(held),
        state: done ? "sending" : "receiving",
        at: this.now(),
      };
      const raw = JSON.stringify(fields);
      const ttl = done ? SENDING_TTL_MS : this.limits.idleMs;
      // The move to "sending" is synced: it is what keeps a second replica from sending it again.
      if (await this.kv.swap(recordKey(u.owner, u.id), u.raw, raw, ttl, done ? {} : LAZY)) {
        Object.assign(u, fields, { raw });
        return "stored";
      }
      // Another chunk (or another copy of this one) got there first, or the upload went.
      Object.assign(u, await this.get(u.owner, u.id));
    }
    throw new Error(`chunk ${seq} of upload ${u.id} lost ${MAX_SWAPS} races to record it; send it again`);
  }

  /** Chunk `seq`'s bytes, for sending. A chunk gone (expired, dropped) or of another length is an error. */
  async chunk(u: Upload<T>, seq: number): Promise<Uint8Array> {
    const data = await this.chunks.get(chunksOf(u.owner, u.id), seq);
    if (data === undefined || data.byteLength !== chunkLength(u.size, seq))
      throw new Error(`chunk ${seq} of upload ${u.id} is no longer in the store`);
    return data;
  }

  /** The upload is sent (or refused): its chunks deleted, its slot freed, `outcome` kept a while. */
  async finish(u: Upload<T>, outcome: unknown): Promise<void> {
    const fields: Fields = {
      size: u.size,
      name: u.name,
      purpose: u.purpose,
      received: u.received,
      next: u.next,
      state: "finished",
      at: this.now(),
      outcome,
    };
    const raw = JSON.stringify(fields);
    await this.kv.put(recordKey(u.owner, u.id), raw, this.limits.keepMs);
    Object.assign(u, fields, { raw });
    await this.slots.release(u.id);
    // The answer need not wait for the chunks to go (one statement); they expire on their own if this fails.
    void this.deleteChunks(u.owner, u.id, u.size).catch(() => {});
  }

  /** Forgets an upload, deletes its bytes and frees its slot. */
  async drop(u: Upload<T>): Promise<void> {
    await this.forget(u.owner, u.id, u.size);
    await this.slots.release(u.id);
  }

  private async forget(owner: string, id: string, size: number): Promise<void> {
    await this.kv.delete(recordKey(owner, id));
    await this.deleteChunks(owner, id, size);
  }

  private deleteChunks(owner: string, id: string, size: number): Promise<void> {
    return this.chunks.drop(chunksOf(owner, id), chunkCount(size));
  }

  /** What the deployment holds now (uploads not finished, bytes received), for tests and benchmarks. */
  async usage(owner?: string): Promise<{ uploads: number; bytes: number }> {
    let uploads = 0;
    let bytes = 0;
    for (const [id, slot] of await this.slots.list()) {
      if (owner !== undefined && slot.o !== owner) continue;
      const u = await this.read(slot.o, id);
      if (u === undefined || u.state === "finished") continue;
      uploads++;
      bytes += u.received;
    }
    return { uploads, bytes };
  }
}
