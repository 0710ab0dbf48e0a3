/**
 * Which MCP task writes wait on the disk (src/calls/mcp-task/mcp-task-store.ts `change`): a write
 * that keeps the status (progress, a lease renewed or taken) is `deferred`, one that changes it
 * (completed, failed, cancelled) is synced. Seen through a keyed store that records each swap.
 */
import { expect, it } from "vitest";
import { LedgerTaskStore } from "../../../src/calls/mcp-task/mcp-task-store.js";
import type { KeyedStore } from "../../../src/ledger/keyed-store.js";

function recordingStore(): { kv: KeyedStore; swaps: Array<boolean | undefined> } {
  const values = new Map<string, string>();
  const swaps: Array<boolean | undefined> = [];
  const kv = {
    get: async (key: string) => values.get(key),
    put: async (key: string, value: string) => {
      values.set(key, value);
    },
    swap: async (
      key: string,
      expected: string | undefined,
      next: string,
      _ttl: number,
      o?: { deferred?: boolean },
    ) => {
      if (values.get(key) !== expected) return false;
      swaps.push(o?.deferred);
      values.set(key, next);
      return true;
    },
    delete: async (key: string) => {
      values.delete(key);
    },
  } as unknown as KeyedStore;
  return { kv, swaps };
}

it("defers a write that keeps the status and syncs one that changes it", async () => {
  const { kv, swaps } = recordingStore();
  const store = new LedgerTaskStore(kv, { cancelledMessage: () => "cancelled" });
  const principal = "a".repeat(64);
  const { taskId } = await store.create({ principal, ttlMs: 60_000, context: {} });
  swaps.length = 0;
  await store.change(taskId, principal, (cur) => ({ ...cur, statusMessage: "Waiting (processing)" }));
  await store.change(taskId, principal, (cur) => ({
    ...cur,
    lease: { owner: "p", until: Date.now() + 6_000 },
  }));
  await store.change(taskId, principal, (cur) => ({ ...cur, status: "completed" }));
  expect(swaps).toEqual([true, true, false]);
});
