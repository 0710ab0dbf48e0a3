/**
 * A pool's share per key counted per deployment (src/shared/deployment-shares.ts): bursts of claims
 * racing on two replicas over one store never hold more than the share, on a store that answers in
 * a random order and on the three real back ends; a crashed replica's units come back after the
 * lease; a store that does not answer leaves each replica its own share; the heap follows holders.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { DeploymentShares, type ShareStore } from "../../src/shared/deployment-shares.js";
import { STORE_KINDS, twoReplicaStores } from "../ledger/stores.js";

/** Values with compare-and-set, each operation answering after a random number of ticks. */
function jitteryStore(now: () => number, seed = 7): ShareStore & { raw(key: string): string | undefined } {
  const values = new Map<string, { v: string; exp: number }>();
  let s = seed;
  const ticks = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % 5;
  };
  const later = async <T>(f: () => T): Promise<T> => {
    for (let i = ticks(); i > 0; i--) await Promise.resolve();
    return f();
  };
  const live = (key: string) => {
    const e = values.get(key);
    return e !== undefined && e.exp > now() ? e.v : undefined;
  };
  return {
    raw: live,
    get: (key) => later(() => live(key)),
    swap: (key, expected, next, ttlMs) =>
      later(() => {
        if (live(key) !== expected) return false;
        values.set(key, { v: next, exp: now() + ttlMs });
        return true;
      }),
  };
}

const granted = (xs: Array<unknown>) => xs.filter((x) => x === undefined).length;

describe("deployment shares on a store answering out of order", () => {
  let clock = 1_000_000;
  const now = () => clock;
  afterEach(() => vi.useRealTimers());

  it("two replicas bursting 200 claims each for one key grant exactly the share, and another key its own", async () => {
    const store = jitteryStore(now);
    const make = (replica: string) =>
      new DeploymentShares(async () => store, { pool: "sessions", perOwner: 7, replica, now });
    const [a, b] = [make("a"), make("b")];
    const burst = await Promise.all(
      Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).claim(i % 3 === 0 ? "other" : "hog")),
    );
    const hog = burst.filter((_, i) => i % 3 !== 0);
    const other = burst.filter((_, i) => i % 3 === 0);
    expect(granted(hog)).toBe(7);
    expect(granted(other)).toBe(7);
    const refusal = hog.find((r) => r !== undefined);
    expect(refusal).toMatchObject({ bound: "share", limit: 7 });
    const doc = JSON.parse(String(store.raw("pool:sessions:hog"))) as Record<string, { n: number }>;
    expect(Object.values(doc).reduce((n, e) => n + e.n, 0)).toBe(7);
    await Promise.all([a.close(), b.close()]);
  });

  it("a unit given back on one replica can be taken on the other; interleaved claims and releases never pass the share", async () => {
    const store = jitteryStore(now, 99);
    const replicas = ["a", "b", "c"].map(
      (replica) => new DeploymentShares(async () => store, { pool: "listens", perOwner: 4, replica, now }),
    );
    const held: DeploymentShares[] = [];
    let peak = 0;
    for (let round = 0; round < 30; round++) {
      const tries = await Promise.all(
        replicas.map(async (r) => ((await r.claim("k")) === undefined ? r : undefined)),
      );
      for (const r of tries) if (r !== undefined) held.push(r);
      peak = Math.max(peak, held.length);
      const doc = JSON.parse(String(store.raw("pool:listens:k"))) as Record<string, { n: number }>;
      expect(Object.values(doc).reduce((n, e) => n + e.n, 0)).toBeLessThanOrEqual(4);
      held.shift()?.release("k");
    }
    expect(peak).toBe(4);
    await Promise.all(replicas.map((r) => r.close()));
  });

  it("a crashed replica's units come back after the lease; a live one's are renewed and stay", async () => {
    vi.useFakeTimers();
    const store = jitteryStore(now);
    const lease = { leaseMs: 30_000, now };
    const live = new DeploymentShares(async () => store, {
      pool: "tasks",
      perOwner: 3,
      replica: "live",
      ...lease,
    });
    const crashed = new DeploymentShares(async () => store, {
      pool: "tasks",
      perOwner: 3,
      replica: "gone",
      ...lease,
    });
    expect(await live.claim("k")).toBeUndefined();
    expect(await crashed.claim("k")).toBeUndefined();
    expect(await crashed.claim("k")).toBeUndefined();
    expect(await live.claim("k")).toMatchObject({ bound: "share", held: 3 });
    // "gone" stops renewing and gives nothing back (as a killed process would); "live" renews every 10 s.
    (crashed as unknown as { renew(): void }).renew = () => {};
    for (let t = 0; t < 4; t++) {
      clock += 10_000;
      await vi.advanceTimersByTimeAsync(10_000);
    }
    expect(await live.claim("k")).toBeUndefined();
    expect(await live.claim("k")).toBeUndefined();
    expect(await live.claim("k")).toMatchObject({ bound: "share", limit: 3 });
    await live.close();
  });

  it("closing gives back at once what the replica held", async () => {
    const store = jitteryStore(now);
    const a = new DeploymentShares(async () => store, { pool: "p", perOwner: 2, replica: "a", now });
    const b = new DeploymentShares(async () => store, { pool: "p", perOwner: 2, replica: "b", now });
    await Promise.all([a.claim("k"), a.claim("k")]);
    expect(await b.claim("k")).toBeDefined();
    await a.close();
    expect(await b.claim("k")).toBeUndefined();
    await b.close();
  });

  it("a store that fails grants on the process's own share and says so; the heap keeps only holders", async () => {
    const errors: unknown[] = [];
    const broken: ShareStore = {
      get: () => Promise.reject(new Error("down")),
      swap: () => Promise.reject(new Error("down")),
    };
    const a = new DeploymentShares(async () => broken, {
      pool: "p",
      perOwner: 1,
      replica: "a",
      now,
      onStoreError: (e) => errors.push(e),
    });
    expect(await a.claim("k")).toBeUndefined();
    expect(errors.length).toBeGreaterThan(0);

    const store = jitteryStore(now);
    const b = new DeploymentShares(async () => store, { pool: "p", perOwner: 2, replica: "b", now });
    await Promise.all(Array.from({ length: 500 }, (_, i) => b.claim(`key${i}`)));
    expect(b.owners).toBe(500);
    for (let i = 0; i < 500; i++) b.release(`key${i}`);
    await vi.waitFor(() => expect(b.owners).toBe(0));
    await Promise.all([a.close(), b.close()]);
  });
});

describe.each(STORE_KINDS)("deployment shares on %s, two replicas", (kind) => {
  const stores = twoReplicaStores(kind);

  it("parallel bursts from both replicas never grant more than the share", async () => {
    const replicas = stores.map(
      (s, i) =>
        new DeploymentShares(async () => s.keyed(), { pool: "sessions", perOwner: 5, replica: `r${i}` }),
    );
    const burst = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (replicas[i % 2] as DeploymentShares).claim("hog")),
    );
    expect(granted(burst)).toBe(5);
    // Given back on the replica of a granted claim, taken on the other: once.
    const from = burst.indexOf(undefined) % 2;
    await (replicas[from] as DeploymentShares).release("hog");
    const to = replicas[1 - from] as DeploymentShares;
    const [x, y] = await Promise.all([to.claim("hog"), to.claim("hog")]);
    expect(granted([x, y])).toBe(1);
    await Promise.all(replicas.map((r) => r.close()));
  });
});
