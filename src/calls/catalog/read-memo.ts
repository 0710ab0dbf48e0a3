/**
 * A service read shared for a while: the model catalog and the voice list change rarely, so one
 * read per key serves every caller for a minute (a burst of completions, a prompt, an estimate).
 * lru-cache does the work: callers during a read share it, a read that fails is not kept (the
 * next call reads again), and an entry is dropped when its time is up, so an engine whose key is
 * gone is not held. The library is loaded on the first read, not at start (it is 25 KB of the
 * bundle that tools/list never needs).
 */
import type { LRUCache } from "lru-cache";
import { lazy } from "../../shared/lazy.js";

export interface ReadMemoOptions {
  /** How long one answer serves. */
  ttlMs: number;
  /** The longest one read may take; it then fails (and is not kept). */
  timeoutMs: number;
  /** The most keys held at once (the HTTP server's sessions are bounded at 1,000). */
  maxKeys?: number;
  /** The clock the time to live is counted on (milliseconds); lru-cache's own (performance.now) when absent. */
  now?: () => number;
}

const lruCache = lazy(() => import("lru-cache"));

/** `read` memoised per key (an object: an engine) for `ttlMs`, each read bounded by `timeoutMs`. */
export function readMemo<K extends object, V extends object>(
  o: ReadMemoOptions,
  read: (key: K, signal: AbortSignal) => Promise<V>,
): (key: K) => Promise<V> {
  let cache: Promise<LRUCache<K, V>> | undefined;
  const open = async () =>
    new (await lruCache()).LRUCache<K, V>({
      max: o.maxKeys ?? 1_000,
      ttl: o.ttlMs,
      ttlAutopurge: true,
      ...(o.now ? { perf: { now: o.now } } : {}),
      fetchMethod: (key, _stale, { signal }) =>
        read(key, AbortSignal.any([signal, AbortSignal.timeout(o.timeoutMs)])),
    });
  return async (key) => {
    cache ??= open();
    const value = await (await cache).fetch(key);
    // fetch() answers undefined only when fetchMethod does, which `read` never does.
    if (value === undefined) throw new Error("readMemo: the read gave no value");
    return value;
  };
}
