/**
 * oidc-provider keeps each request's context in one AsyncLocalStorage (its `als` helper, imported
 * below, entered by `als.run` for every request its Koa app serves; read back only by its Client ID
 * Metadata Document fetch, for our allowFetch in cimd-guard.ts). On Node 22 without
 * --experimental-async-context-frame, AsyncLocalStorage is built on async hooks: its first `run`
 * turns promise hooks on for the whole process, and they stay on, so every `await` of every MCP
 * request then costs about three times as much (docs/oauth.md, "Which Node"). Its own `disable()`
 * turns them off again. So the provider's requests are counted, and when the last one in flight
 * has been answered the storage is disabled: the hooks run only while the authorization server is
 * serving, and its next request's `run` enables them again. A provider request always runs
 * entirely inside the count, so its context is never lost; work it leaves behind after answering
 * (none that reads the context here) would read no context, which allowFetch takes as "no request
 * known" (no per-address limit, the per-client and global ones still hold). Where
 * AsyncLocalStorage keeps its context without hooks (Node 24, AsyncContextFrame) nothing changes.
 */
import type { AsyncLocalStorage } from "node:async_hooks";
import providerStorage from "oidc-provider/lib/helpers/als.js";

/** True for the hook-based AsyncLocalStorage (Node's async_hooks one has `_propagate`, its init hook). */
export function usesPromiseHooks(storage: AsyncLocalStorage<unknown>): boolean {
  return typeof (storage as unknown as { _propagate?: unknown })._propagate === "function";
}

/**
 * `serve`, disabling `storage` whenever the last call in flight has finished (where `storage`
 * runs on promise hooks; elsewhere `serve` itself).
 */
export function hooksOnlyWhileServing<A extends unknown[]>(
  serve: (...args: A) => Promise<void>,
  storage: AsyncLocalStorage<unknown> = providerStorage,
): (...args: A) => Promise<void> {
  if (!usesPromiseHooks(storage)) return serve;
  let serving = 0;
  return async (...args) => {
    serving++;
    try {
      await serve(...args);
    } finally {
      serving--;
      if (serving === 0) storage.disable();
    }
  };
}
