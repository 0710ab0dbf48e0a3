/**
 * The media viewer's upload bounds, per deployment: every upload in progress (receiving or being
 * sent) holds one slot in a single document of the ledger's shared store (src/ledger/keyed-store.ts),
 * so every replica on that store counts the same uploads. A slot is claimed by one compare-and-set
 * of that document after the bounds are checked against what it held (reserve), and given back the
 * same way (release): two opens racing, in one process or on two replicas, cannot both take the last
 * slot, whatever awaits lie between them. A slot whose upload went idle (its record expired: only
 * accepted bytes renew it, src/calls/uploads/upload-store.ts) is reclaimed by the next reserve.
 */
import type { KeyedStore } from "../../ledger/keyed-store.js";
import { LocalRefusal } from "../../shared/local-refusals.js";
import { byteSize } from "../../shared/wording.js";

export interface UploadLimits {
  /** Uploads one user (key hash) may have open (receiving or being sent) at once. */
  perUserUploads: number;
  /** Bytes one user's open uploads may declare in all. */
  perUserBytes: number;
  /** Uploads open in the deployment at once, all users together. */
  totalUploads: number;
  /** Bytes all open uploads may declare together: the most the store holds for uploads. */
  totalBytes: number;
  /** An upload that accepts no byte for this long is dropped with its bytes. */
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

/** One upload's slot: its owner (key hash), declared size, and when it was opened. */
export interface Slot {
  o: string;
  s: number;
  t: number;
}
type Slots = Record<string, Slot>;

const SLOTS_KEY = "upl-slots";
/** The document outlives any slot in it; each change renews it. */
const SLOTS_TTL_MS = 24 * 60 * 60_000;
const ATTEMPTS = 50;

/** Whether the upload holding a slot is still alive (its record not expired), and when it goes idle. */
export type Liveness = (id: string, slot: Slot) => Promise<{ live: boolean; idleAt?: number }>;

const parse = (raw: string | undefined): Slots => (raw === undefined ? {} : (JSON.parse(raw) as Slots));

function busy(what: string, limit: string, retry: string): LocalRefusal {
  return new LocalRefusal(
    "UPLOADS_BUSY",
    `${what} (the limit is ${limit}); nothing was stored or sent`,
    `${retry} An upload that accepts no chunk for 5 minutes is dropped with its bytes; finishing or abandoning one frees its place.`,
  );
}

/** "Retry in about N s", from the soonest time one of `held` goes idle (undefined: being sent). */
function retryIn(idleAts: Array<number | undefined>, now: number): string {
  const soonest = Math.min(...idleAts.map((t) => t ?? Number.POSITIVE_INFINITY));
  if (!Number.isFinite(soonest)) return "Retry once an upload being sent finishes (usually within a minute).";
  return `Retry in about ${Math.max(1, Math.ceil((soonest - now) / 1000))} s, when the soonest idle one is dropped, or sooner once one finishes.`;
}

export class UploadSlots {
  constructor(
    private readonly kv: KeyedStore,
    private readonly limits: UploadLimits,
    private readonly now: () => number,
  ) {}

  /**
   * Claims a slot for upload `id` of `size` bytes for `owner` if every bound allows it, dropping
   * (through `reclaim`) the slots whose uploads died; refused with the bound and when to retry.
   */
  async reserve(
    id: string,
    owner: string,
    size: number,
    alive: Liveness,
    reclaim: (id: string, slot: Slot) => Promise<void>,
  ): Promise<void> {
    for (let i = 0; i < ATTEMPTS; i++) {
      const raw = await this.kv.get(SLOTS_KEY);
      const all = parse(raw);
      const now = this.now();
      const idle = new Map<string, number | undefined>();
      const dead: Array<[string, Slot]> = [];
      for (const [sid, slot] of Object.entries(all)) {
        const l = await alive(sid, slot);
        if (l.live) idle.set(sid, l.idleAt);
        else dead.push([sid, slot]);
      }
      const live = Object.entries(all).filter(([sid]) => idle.has(sid));
      const mine = live.filter(([, s]) => s.o === owner);
      const held = (xs: Array<[string, Slot]>) => xs.reduce((n, [, s]) => n + s.s, 0);
      const soon = (xs: Array<[string, Slot]>) =>
        retryIn(
          xs.map(([sid]) => idle.get(sid)),
          now,
        );
      const L = this.limits;
      if (mine.length >= L.perUserUploads)
        throw busy(`You have ${mine.length} uploads in progress`, `${L.perUserUploads} at once`, soon(mine));
      if (held(mine) + size > L.perUserBytes)
        throw busy(
          `Your uploads in progress would declare ${byteSize(held(mine) + size)}`,
          `${byteSize(L.perUserBytes)} per user`,
          soon(mine),
        );
      if (live.length >= L.totalUploads || held(live) + size > L.totalBytes)
        throw busy(
          "This server is holding as many uploads as it allows at once",
          `${L.totalUploads} uploads and ${byteSize(L.totalBytes)} in all`,
          soon(live),
        );
      const next: Slots = Object.fromEntries(live);
      next[id] = { o: owner, s: size, t: now };
      if (await this.kv.swap(SLOTS_KEY, raw, JSON.stringify(next), SLOTS_TTL_MS)) {
        for (const [sid, slot] of dead) await reclaim(sid, slot).catch(() => {});
        return;
      }
    }
    throw busy("Too many uploads are being opened at this moment", "one open at a time", "Retry in 1 s.");
  }

  /** Gives upload `id`'s slot back (finished, refused or abandoned); nothing when it holds none. */
  async release(id: string): Promise<void> {
    for (let i = 0; i < ATTEMPTS; i++) {
      const raw = await this.kv.get(SLOTS_KEY);
      const all = parse(raw);
      if (!(id in all)) return;
      delete all[id];
      if (await this.kv.swap(SLOTS_KEY, raw, JSON.stringify(all), SLOTS_TTL_MS)) return;
    }
  }

  /** The slots as they stand (live or not yet reclaimed), for usage figures and tests. */
  async list(): Promise<Array<[string, Slot]>> {
    return Object.entries(parse(await this.kv.get(SLOTS_KEY)));
  }
}
