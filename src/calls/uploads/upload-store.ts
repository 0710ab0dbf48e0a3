/**
 * Where the media viewer's uploads wait for their last chunk (docs/viewer.md#uploads): a private
 * temporary directory (0700, files 0600) of this process, bounded per user (the key's hash) and in
 * all, emptied as uploads finish or go idle, removed when the process exits. Every bound (the
 * declared size, how many uploads and bytes a user and the server hold, each chunk's number and
 * length) is checked before a byte is written; an upload is found only under the key that opened
 * it, and an upload of another key reads exactly like one that never existed.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { type FileHandle, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ArgumentError, LocalRefusal } from "../../shared/local-refusals.js";
import { byteSize } from "../../shared/wording.js";
import { collectGarbage } from "./collect-garbage.js";

/** Every chunk but the last holds exactly this many bytes (base64: 699,052 characters). */
export const UPLOAD_CHUNK_BYTES = 512 * 1024;
/** After this many bytes received, a full collection frees the chunks' strings (collect-garbage.ts). */
const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;

export interface UploadLimits {
  /** Uploads one user may have open (receiving or being sent) at once. */
  perUserUploads: number;
  /** Bytes one user's open uploads may declare in all. */
  perUserBytes: number;
  /** Uploads open on this server at once, all users together. */
  totalUploads: number;
  /** Bytes all open uploads may declare together: the most this store ever holds on disk. */
  totalBytes: number;
  /** An upload with no chunk for this long is dropped with its bytes. */
  idleMs: number;
  /** How long a finished upload's outcome is kept for the view to ask again. */
  keepMs: number;
}

const MiB = 1024 * 1024;
export const DEFAULT_UPLOAD_LIMITS: UploadLimits = {
  perUserUploads: 3,
  perUserBytes: 128 * MiB,
  totalUploads: 32,
  totalBytes: 1024 * MiB,
  idleMs: 5 * 60_000,
  keepMs: 10 * 60_000,
};

export type UploadState = "receiving" | "sending" | "finished";

export interface Upload<T = unknown> {
  readonly id: string;
  readonly owner: string;
  readonly size: number;
  readonly name: string | undefined;
  /** What the upload is for (asset or voice): the caller's, kept with it. */
  readonly purpose: T;
  /** The file the chunks go to, inside the store's private directory. */
  readonly file: string;
  received: number;
  /** The next chunk's number. */
  next: number;
  state: UploadState;
  lastAt: number;
  /** The outcome of sending, once it started (src/calls/uploads/chunked-upload.ts sets it). */
  sent?: Promise<unknown>;
  handle?: FileHandle | undefined;
  busy: boolean;
}

/** How many chunks a file of `size` bytes takes. */
export const chunkCount = (size: number): number => Math.max(1, Math.ceil(size / UPLOAD_CHUNK_BYTES));

/** The exact length chunk `seq` of a `size`-byte file must have. */
export const chunkLength = (size: number, seq: number): number =>
  Math.min(UPLOAD_CHUNK_BYTES, size - seq * UPLOAD_CHUNK_BYTES);

const full = (what: string, limit: string): LocalRefusal =>
  new LocalRefusal(
    "UPLOADS_BUSY",
    `${what} (the limit is ${limit}); nothing was stored or sent`,
    "Finish or abandon the uploads in progress (an idle one is dropped after 5 minutes), then choose the file again.",
  );

export class UploadStore<T = unknown> {
  private readonly uploads = new Map<string, Upload<T>>();
  private dir: string | undefined;
  private sinceCollected = 0;
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly limits: UploadLimits = DEFAULT_UPLOAD_LIMITS,
    private readonly now: () => number = Date.now,
    private readonly parent: string = tmpdir(),
  ) {}

  /** Opens an upload of `size` bytes for `owner` after every bound; writes nothing yet. */
  async open(owner: string, size: number, name: string | undefined, purpose: T): Promise<Upload<T>> {
    this.sweep();
    const active = [...this.uploads.values()].filter((u) => u.state !== "finished");
    const mine = active.filter((u) => u.owner === owner);
    const held = (us: Upload<T>[]) => us.reduce((n, u) => n + u.size, 0);
    const L = this.limits;
    if (mine.length >= L.perUserUploads)
      throw full(`You have ${mine.length} uploads in progress`, `${L.perUserUploads} at once`);
    if (held(mine) + size > L.perUserBytes)
      throw full(
        `Your uploads in progress would hold ${byteSize(held(mine) + size)}`,
        byteSize(L.perUserBytes),
      );
    if (active.length >= L.totalUploads || held(active) + size > L.totalBytes)
      throw full(
        "This server is holding as many uploads as it allows at once",
        `${byteSize(L.totalBytes)} in all`,
      );
    const id = `upl_${randomBytes(16).toString("base64url")}`;
    const file = path.join(this.directory(), id);
    const upload: Upload<T> = {
      id,
      owner,
      size,
      name,
      purpose,
      file,
      received: 0,
      next: 0,
      state: "receiving",
      lastAt: this.now(),
      busy: false,
      // "wx": a fresh file only; 0600: this process's user alone reads it.
      handle: await open(file, "wx", 0o600),
    };
    this.uploads.set(id, upload);
    this.sweeper ??= setInterval(() => this.sweep(), 30_000).unref();
    return upload;
  }

  /** The owner's upload by ID; another key's, a finished-and-forgotten or a made-up one alike are unknown. */
  get(owner: string, id: string): Upload<T> {
    this.sweep();
    const u = this.uploads.get(id);
    if (u === undefined || u.owner !== owner) {
      throw new ArgumentError(
        "upload",
        `${id.slice(0, 40)} is not an upload in progress here (it finished long ago, went idle for 5 minutes, or was never started); choose the file again`,
      );
    }
    u.lastAt = this.now();
    return u;
  }

  /**
   * Stores chunk `seq` after checking its place and length: chunks come one at a time, in order
   * from 0, each UPLOAD_CHUNK_BYTES long but the last (the rest). Anything else abandons the
   * upload (its bytes deleted) and is refused; nothing of it ever reaches the service.
   */
  async append(u: Upload<T>, seq: number, bytes: Uint8Array): Promise<void> {
    const count = chunkCount(u.size);
    const refuse = async (field: string, why: string): Promise<never> => {
      await this.drop(u);
      throw new ArgumentError(
        field,
        `${why}; the upload was abandoned and nothing was sent: choose the file again`,
      );
    };
    if (u.state !== "receiving" || u.busy)
      return refuse(
        "seq",
        `chunk ${seq} arrived while ${u.busy ? "another chunk was being stored" : "the upload was complete"}`,
      );
    if (seq >= count)
      return refuse("seq", `chunk ${seq} is past the last one (${count - 1}) of a ${u.size}-byte file`);
    if (seq !== u.next)
      return refuse(
        "seq",
        `chunk ${seq} arrived where chunk ${u.next} comes next; chunks go in order from 0`,
      );
    const want = chunkLength(u.size, seq);
    if (bytes.byteLength !== want) {
      return refuse(
        "data",
        `chunk ${seq} holds ${bytes.byteLength} bytes where ${want} belong (${UPLOAD_CHUNK_BYTES}-byte chunks, the last one the rest of ${u.size} bytes)`,
      );
    }
    u.busy = true;
    try {
      await u.handle?.write(bytes, 0, bytes.byteLength, u.received);
    } catch (err) {
      await this.drop(u);
      throw err;
    } finally {
      u.busy = false;
    }
    u.received += bytes.byteLength;
    u.next++;
    this.sinceCollected += bytes.byteLength;
    if (this.sinceCollected >= COLLECT_EVERY_BYTES) {
      this.sinceCollected = 0;
      collectGarbage();
    }
    u.lastAt = this.now();
    if (u.received === u.size) {
      await u.handle?.close();
      u.handle = undefined;
      u.state = "sending";
    }
  }

  /** The bytes are sent (or refused): deleted now, the outcome kept for a while. */
  async finish(u: Upload<T>): Promise<void> {
    u.state = "finished";
    u.lastAt = this.now();
    // A file that cannot be removed now goes with the directory when the process exits.
    await rm(u.file, { force: true }).catch(() => {});
  }

  /** Forgets an upload and deletes its bytes. */
  async drop(u: Upload<T>): Promise<void> {
    this.uploads.delete(u.id);
    const handle = u.handle;
    u.handle = undefined;
    await handle?.close().catch(() => {});
    await rm(u.file, { force: true }).catch(() => {});
  }

  /** Drops uploads idle past their limit and outcomes kept past theirs. Never one being sent. */
  sweep(): void {
    const at = this.now();
    for (const u of this.uploads.values()) {
      const idle = at - u.lastAt;
      if (
        (u.state === "receiving" && idle > this.limits.idleMs) ||
        (u.state === "finished" && idle > this.limits.keepMs)
      )
        void this.drop(u);
    }
    if (this.uploads.size === 0 && this.sweeper !== undefined) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** What the store holds now, for tests and the benchmark. */
  usage(owner?: string): { uploads: number; bytes: number } {
    const open = [...this.uploads.values()].filter(
      (u) => u.state !== "finished" && (owner === undefined || u.owner === owner),
    );
    return { uploads: open.length, bytes: open.reduce((n, u) => n + u.received, 0) };
  }

  /** The private directory, made on first use and removed when the process exits. */
  private directory(): string {
    if (this.dir === undefined) {
      this.dir = mkdtempSync(path.join(this.parent, "generation-mcp-uploads-"));
      if (made.size === 0)
        process.once("exit", () => {
          for (const d of made) rmSync(d, { recursive: true, force: true });
        });
      made.add(this.dir);
    }
    return this.dir;
  }
}

/** Every private directory this process made: removed, whatever is left in them, when it exits. */
const made = new Set<string>();
