/**
 * A shared pool with a total and a share per owner (a key hash, or before any credential an
 * address), claimed synchronously: `take` either reserves at once or refuses, so requests racing
 * past an `await` cannot overshoot the cap; whoever took gives back on failure or at the end. An
 * owner holding nothing is forgotten, so the heap follows what is held, not who ever came.
 */
import { LRUCache } from "lru-cache";

/** Why a take was refused: the pool's total, or the owner's own share. */
export interface PoolRefusal {
  /** Which bound: "total" or "share". */
  bound: "total" | "share";
  /** The bound's value, in the pool's units. */
  limit: number;
}

export class Shares {
  readonly #held = new Map<string, number>();
  #total = 0;

  constructor(
    readonly total: number,
    readonly perOwner: number,
  ) {}

  get used(): number {
    return this.#total;
  }

  /** What `owner` holds now. */
  heldBy(owner: string): number {
    return this.#held.get(owner) ?? 0;
  }

  /** Owners holding anything (the heap this pool keeps). */
  get owners(): number {
    return this.#held.size;
  }

  /** Reserves `n` units for `owner` now, or says which bound refuses them (nothing is reserved then). */
  take(owner: string, n = 1): PoolRefusal | undefined {
    const mine = this.heldBy(owner);
    if (mine + n > this.perOwner) return { bound: "share", limit: this.perOwner };
    if (this.#total + n > this.total) return { bound: "total", limit: this.total };
    this.#held.set(owner, mine + n);
    this.#total += n;
    return undefined;
  }

  /** Gives back `n` units `owner` took. */
  give(owner: string, n = 1): void {
    const left = this.heldBy(owner) - n;
    this.#total -= Math.min(n, this.heldBy(owner));
    if (left > 0) this.#held.set(owner, left);
    else this.#held.delete(owner);
  }

  /** The owner holding the most (ties: any), with what it holds. */
  largest(): [string, number] | undefined {
    let top: [string, number] | undefined;
    for (const entry of this.#held) if (top === undefined || entry[1] > top[1]) top = entry;
    return top;
  }
}

/** A `give` that runs once, however often it is called (a release reached from several endings). */
export function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/**
 * The operator's log of refusals: one line per limit and source (key hash prefix or address) a
 * minute, however hard the source pushes; remembers at most `max` sources.
 */
export class LimitLog {
  readonly #said: LRUCache<string, true>;
  constructor(
    readonly write: (line: string) => void,
    o: { ttlMs?: number; max?: number; now?: () => number } = {},
  ) {
    this.#said = new LRUCache({
      max: o.max ?? 10_000,
      ttl: o.ttlMs ?? 60_000,
      // Read the clock on every check (lru-cache otherwise holds it for a millisecond).
      ttlResolution: 0,
      ...(o.now === undefined ? {} : { perf: { now: o.now } }),
    });
  }

  /** Logs `line` unless the same limit was logged for this source within the minute. */
  note(limit: string, source: string, line: string): void {
    const key = `${limit}\u0000${source}`;
    if (this.#said.has(key)) return;
    this.#said.set(key, true);
    this.write(`${line} (${limit}, source ${source}; said at most once a minute per source)`);
  }
}

/** How a source is named in the log: a key hash by its first 12 hex digits, an address as it is. */
export const sourceOfKey = (keyHash: string): string => `key ${keyHash.slice(0, 12)}`;
