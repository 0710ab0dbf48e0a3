/**
 * Following tasks for a listen (src/calls/mcp-task/mcp-task-watch.ts) on an in-process engine and
 * SQLite ledger: only the key's own tasks are agreed (another key's ID as an unknown one), the
 * state is sent when the listen starts, a change this process writes at once, a change written by
 * another process (straight into the store) within a read of the store, and the last task's end
 * settles the listen and leaves nothing followed.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { taskStore } from "../../../src/calls/mcp-task/mcp-task-record.js";
import { followedCount, WATCH_INTERVAL_MS, watchTasks } from "../../../src/calls/mcp-task/mcp-task-watch.js";
import { resumable } from "../../../src/calls/paid/resumable.js";
import type { DetailedTask } from "../../../src/mcp/mcp-task-wire.js";
import { type Harness, harness } from "../../tools/harness.js";

let h: Harness;
beforeEach(async () => {
  h = await harness({ timeScale: 20 });
});
afterEach(() => h.close());

/** A task driven elsewhere: its lease held far ahead, so no read here takes it over. */
async function elsewhere(): Promise<string> {
  const store = await taskStore(h.engine);
  const { taskId } = await store.create({
    principal: h.engine.keyHash,
    ttlMs: 60_000,
    context: { identity: "gm-test", work: {} },
    statusMessage: "Sending the request",
    lease: { owner: "another process", until: Date.now() + 60_000 },
  });
  return taskId;
}

function recorder() {
  const seen: DetailedTask[] = [];
  let settled = 0;
  return {
    seen,
    settled: () => settled,
    hooks: { onTask: (t: DetailedTask) => seen.push(t), onSettled: () => settled++ },
  };
}

describe("following tasks for a listen", () => {
  it("agrees to the key's own tasks only: another key's ID is left out as an unknown one", async () => {
    const taskId = await elsewhere();
    const mine = recorder();
    const watch = await watchTasks(h.engine, resumable, [taskId, "not-a-task"], mine.hooks);
    expect(watch.taskIds).toEqual([taskId]);
    const other = { ...h.engine, keyHash: "another key's hash" };
    const theirs = recorder();
    const foreign = await watchTasks(other, resumable, [taskId], theirs.hooks);
    const unknown = await watchTasks(other, resumable, ["not-a-task"], theirs.hooks);
    expect(foreign.taskIds).toEqual([]);
    expect(unknown.taskIds).toEqual(foreign.taskIds);
    foreign.start();
    await new Promise((r) => setTimeout(r, WATCH_INTERVAL_MS + 300));
    expect(theirs.seen).toEqual([]);
    watch.close();
    expect(followedCount()).toBe(0);
  });

  it("sends the state at start, this process's change at once, another's within a read, then settles", async () => {
    const taskId = await elsewhere();
    const r = recorder();
    const watch = await watchTasks(h.engine, resumable, [taskId], r.hooks);
    expect(r.seen).toEqual([]);
    watch.start();
    await expect.poll(() => r.seen.length).toBe(1);
    expect(r.seen[0]).toMatchObject({ taskId, status: "working", statusMessage: "Sending the request" });

    const store = await taskStore(h.engine);
    await store.change(taskId, h.engine.keyHash, (cur) => ({ ...cur, statusMessage: "Processing" }));
    // Written here: sent without waiting for the next read.
    await expect.poll(() => r.seen.length, { timeout: WATCH_INTERVAL_MS / 2 }).toBe(2);
    expect(r.seen[1]?.statusMessage).toBe("Processing");
    // A write that changes neither status nor message (a lease renewed) sends nothing.
    await store.change(taskId, h.engine.keyHash, (cur) => ({
      ...cur,
      lease: { owner: "x", until: Date.now() + 60_000 },
    }));

    // Another process finishes it: straight into the store, as another replica's write lands.
    const kv = await h.engine.ledger.keyed();
    const key = `mcp-task:${h.engine.keyHash}:${taskId}`;
    const rec = JSON.parse((await kv.get(key)) ?? "{}");
    const result = { content: [{ type: "text", text: "done elsewhere" }] };
    await kv.put(
      key,
      JSON.stringify({ ...rec, status: "completed", result, lastUpdatedAt: Date.now() }),
      60_000,
    );
    await expect.poll(() => r.settled(), { timeout: WATCH_INTERVAL_MS * 3 }).toBe(1);
    expect(r.seen).toHaveLength(3);
    expect(r.seen[2]).toMatchObject({ taskId, status: "completed", result });
    expect(followedCount()).toBe(0);
  });
});
