/**
 * A pool's share per owner (a key hash) counted per deployment: every replica on one ledger store
 * counts the same share, so N replicas allow one key what one replica allows. The totals stay per
 * process (fair-shares.ts): a process's memory and descriptors are its own.
 *
 * One document per pool and owner in the ledger's keyed values (src/ledger/keyed-store.ts), `{replica:
 * {n, exp}}`: what each replica holds for that owner, under a lease. A replica changes only its own
 * entry, by compare-and-set of the whole document after summing the others' live entries, so two
 * replicas racing cannot both take the last unit. Within a process the claims of one owner are
 * batched: one read and one compare-and-set settle every claim that arrived meanwhile, so a burst
 * of a hundred costs a few round trips, not a hundred retries. Each replica renews its entries every
 * third of the lease; a replica that stops (a crash) stops renewing, and its entries lapse after the
 * lease, so its units come back to the owner without anyone cleaning up.
 *
 * The caller reserves in its process's Shares first (synchronously, before any await), then asks
 * here; a refusal here gives that back. While the store does not answer (STORE_ANSWER_MS), a claim
 * is granted on the process's own share alone and written once the store answers again.
 */

/** The two operations of the ledger's keyed values this needs (KeyedStore has them). */
export interface ShareStore {
  get(key: string): Promise<string | undefined>;
  swap(
    key: string,
    expected: string | undefined,
    next: string,
    ttlMs: number,
    o?: { deferred?: boolean },
  ): Promise<boolean>;
}

/** A replica's units for one owner, and when they lapse (ms since the epoch). */
interface Entry {
  n: number;
  exp: number;
}
type Doc = Record<string, Entry>;

/** A claim refused because the owner holds its whole share across the deployment. */
export interface DeploymentRefusal {
  bound: "share";
  limit: number;
  /** Units the owner holds on every replica together (this one's included). */
  held: number;
}

interface Waiting {
  resolve: (refusal: DeploymentRefusal | undefined) => void;
}

interface OwnerState {
  /** Units this process holds for the owner, claims still being decided included. */
  held: number;
  /** Units the store last recorded for this replica. */
  written: number;
  waiting: Waiting[];
  /** The sync under way (later changes ride it: it loops while `dirty`). */
  busy: Promise<void> | undefined;
  dirty: boolean;
}

/** How long a replica's units outlive its last renewal (a crashed replica's come back after this). */
export const POOL_LEASE_MS = 60_000;
/** A store slower than this counts as down for a claim: the process's own share decides it. */
export const STORE_ANSWER_MS = 3_000;
const ATTEMPTS = 20;

export interface DeploymentSharesOptions {
  /** The pool's name in the store: `sessions`, `listens`, `tasks`. */
  pool: string;
  /** Units one owner may hold across the deployment. */
  perOwner: number;
  /** This process's name in the documents (random per process). */
  replica: string;
  leaseMs?: number;
  now?: () => number;
  /** Told when the store failed and a claim was decided on this process's share alone. */
  onStoreError?: (error: unknown) => void;
}

function withinTime<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the store did not answer within ${ms} ms`)), ms);
    timer.unref?.();
    work.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

function parse(raw: string | undefined): Doc {
  if (raw === undefined) return {};
  try {
    const doc = JSON.parse(raw) as unknown;
    return typeof doc === "object" && doc !== null ? (doc as Doc) : {};
  } catch {
    return {};
  }
}

export class DeploymentShares {
  readonly #owners = new Map<string, OwnerState>();
  readonly #store: () => Promise<ShareStore>;
  readonly #o: Required<Omit<DeploymentSharesOptions, "onStoreError">> &
    Pick<DeploymentSharesOptions, "onStoreError">;
  readonly #renew: ReturnType<typeof setInterval>;

  constructor(store: () => Promise<ShareStore>, o: DeploymentSharesOptions) {
    this.#store = store;
    this.#o = { leaseMs: POOL_LEASE_MS, now: Date.now, ...o };
    this.#renew = setInterval(() => this.renew(), Math.max(1, Math.floor(this.#o.leaseMs / 3)));
    this.#renew.unref?.();
  }

  get perOwner(): number {
    return this.#o.perOwner;
  }

  /** Owners this process keeps state for (the heap it holds: only owners holding something). */
  get owners(): number {
    return this.#owners.size;
  }

  /**
   * Claims one unit for `owner` across the deployment (the caller already reserved it in its own
   * process): undefined when granted, else the refusal. A granted unit is given back by `release`.
   */
  claim(owner: string): Promise<DeploymentRefusal | undefined> {
    const s = this.#state(owner);
    s.held += 1;
    const decided = new Promise<DeploymentRefusal | undefined>((resolve) => s.waiting.push({ resolve }));
    void this.#flush(owner, s);
    return decided;
  }

  /** Gives back a unit `claim` granted; resolves once the store has it (callers need not wait). */
  release(owner: string): Promise<void> {
    const s = this.#owners.get(owner);
    if (s === undefined || s.held === 0) return Promise.resolve();
    s.held -= 1;
    return this.#flush(owner, s);
  }

  /** Writes every owner's entry again with a fresh lease (runs every third of the lease). */
  renew(): void {
    for (const [owner, s] of this.#owners) void this.#flush(owner, s);
  }

  /** Stops renewing and gives back what this process holds, so other replicas need not wait out the lease. */
  async close(): Promise<void> {
    clearInterval(this.#renew);
    const open = [...this.#owners];
    for (const [, s] of open) s.held = s.waiting.length;
    await Promise.all(open.map(([owner, s]) => this.#flush(owner, s)));
  }

  #state(owner: string): OwnerState {
    let s = this.#owners.get(owner);
    if (s === undefined) {
      s = { held: 0, written: 0, waiting: [], busy: undefined, dirty: false };
      this.#owners.set(owner, s);
    }
    return s;
  }

  /** Brings the store in line with `s`, one sync at a time per owner; later changes ride the next. */
  #flush(owner: string, s: OwnerState): Promise<void> {
    s.dirty = true;
    if (s.busy !== undefined) return s.busy;
    const run = async () => {
      try {
        while (s.dirty) {
          s.dirty = false;
          await this.#sync(owner, s).catch((error: unknown) => this.#alone(s, error));
        }
      } finally {
        s.busy = undefined;
        if (s.held === 0 && s.written === 0 && s.waiting.length === 0) this.#owners.delete(owner);
      }
    };
    s.busy = run();
    return s.busy;
  }

  /** One read and compare-and-set (retried on a race) deciding every claim waiting now. */
  async #sync(owner: string, s: OwnerState): Promise<void> {
    const { pool, replica, perOwner, leaseMs } = this.#o;
    const key = `pool:${pool}:${owner}`;
    const store = await withinTime(this.#store(), STORE_ANSWER_MS);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const raw = await withinTime(store.get(key), STORE_ANSWER_MS);
      const now = this.#o.now();
      const next: Doc = {};
      let others = 0;
      for (const [r, e] of Object.entries(parse(raw))) {
        if (r === replica || !(e.exp > now) || !(e.n > 0)) continue;
        others += e.n;
        next[r] = e;
      }
      const batch = s.waiting.length;
      const confirmed = s.held - batch;
      const grant = Math.max(0, Math.min(batch, perOwner - others - confirmed));
      const mine = confirmed + grant;
      if (mine > 0) next[replica] = { n: mine, exp: now + leaseMs };
      const empty = Object.keys(next).length === 0;
      // Nothing to record and nothing recorded: no write at all.
      const stored =
        empty && raw === undefined
          ? true
          : await withinTime(
              store.swap(key, raw, JSON.stringify(next), empty ? 1 : leaseMs, { deferred: true }),
              STORE_ANSWER_MS,
            );
      if (!stored) continue;
      s.written = mine;
      const decided = s.waiting.splice(0, batch);
      s.held -= batch - grant;
      const refusal: DeploymentRefusal = { bound: "share", limit: perOwner, held: others + mine };
      for (const [i, w] of decided.entries()) w.resolve(i < grant ? undefined : refusal);
      return;
    }
    throw new Error(`pool ${pool}: the share document kept changing under ${ATTEMPTS} attempts`);
  }

  /** The store failed: the claims waiting are granted on this process's own share; retried at renewal. */
  #alone(s: OwnerState, error: unknown): void {
    this.#o.onStoreError?.(error);
    for (const w of s.waiting.splice(0)) w.resolve(undefined);
    // Unknown what the store holds for us now: the next renewal writes what we hold.
    s.written = s.held > 0 ? s.held : s.written;
  }
}
