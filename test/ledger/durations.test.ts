/**
 * What the ledger learns about durations: the model on the record, the first terminal sighting
 * only, successes only, per key, newest first, and nothing lost to a concurrent delivery mark.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { LedgerImpl } from "../../src/ledger/ledger.js";
import { hashKey, type Ledger } from "../../src/ledger/open-ledger.js";
import { DEFAULT_BACKOFF } from "../../src/ledger/replay.js";
import { SqliteStore } from "../../src/ledger/stores/sqlite.js";
import { API_KEY, FAST, fastLedger, OTHER_KEY, tempDir } from "./ledger-helpers.js";

let t: ReturnType<typeof tempDir>;
let ledger: Ledger;
let now = 1_000_000;
const keyHash = hashKey(API_KEY);

beforeEach(async () => {
  t = tempDir();
  now = 1_000_000;
  ledger = await fastLedger(t.uri, { now: () => now });
});
afterEach(async () => {
  await ledger.close();
  t.cleanup();
});

async function submit(taskId: string, model: string, key = keyHash) {
  const r = await ledger.run(
    {
      keyHash: key,
      tool: "generate_image",
      endpoint: "/api/generate/image",
      bytes: `{"t":"${taskId}"}`,
      model,
    },
    async () => ({ taskId }),
    (x) => x,
  );
  return r.identity;
}

it("keeps the model, and learns each task's first terminal sighting, newest first", async () => {
  await submit("task_a", "img-1");
  await ledger.noteSeen(keyHash, "task_a", {
    pendingAt: now + 2000,
    terminalAt: now + 3100,
    status: "succeeded",
  });
  // A later sighting of the same task says nothing new.
  await ledger.noteSeen(keyHash, "task_a", { terminalAt: now + 60_000, status: "succeeded" });
  now += 10_000;
  await submit("task_b", "img-1");
  await ledger.noteSeen(keyHash, "task_b", { terminalAt: now + 2900, status: "partial" });
  now += 10_000;
  await submit("task_c", "img-1");
  await ledger.noteSeen(keyHash, "task_c", { terminalAt: now + 500, status: "failed" });
  await submit("task_d", "img-2");
  await ledger.noteSeen(keyHash, "task_d", { terminalAt: now + 9000, status: "succeeded" });

  expect((await ledger.list(keyHash)).map((r) => r.model)).toContain("img-1");
  expect(await ledger.taskOrigin(keyHash, "task_b")).toEqual({ createdAt: 1_010_000, model: "img-1" });
  // A failure may end at any time: it says nothing about how long the model takes.
  expect(await ledger.durations(keyHash, "img-1")).toEqual([
    { pendingMs: 0, seenMs: 2900 },
    { pendingMs: 2000, seenMs: 3100 },
  ]);
  expect(await ledger.durations(hashKey(OTHER_KEY), "img-1")).toEqual([]);
  expect(await ledger.taskOrigin(hashKey(OTHER_KEY), "task_b")).toBeUndefined();
});

it("a delivery mark at the same moment does not erase a sighting", async () => {
  const identity = await submit("task_a", "img-1");
  await Promise.all([
    ledger.noteSeen(keyHash, "task_a", { terminalAt: now + 3000, status: "succeeded" }),
    ledger.markDelivered(keyHash, identity, true),
  ]);
  expect(await ledger.durations(keyHash, "img-1")).toEqual([{ pendingMs: 0, seenMs: 3000 }]);
  expect((await ledger.list(keyHash))[0]?.delivered).toBe(true);
});

it("keeps the task's last status read for the listing: newest wins, a repeat writes nothing", async () => {
  await submit("task_s", "img-1");
  const listed = async () => (await ledger.list(keyHash, { taskId: "task_s" }))[0];
  expect((await listed())?.taskStatus).toBeUndefined();
  await ledger.noteStatus(keyHash, "task_s", { status: "queued", at: now + 100 });
  const queued = await listed();
  expect(queued).toMatchObject({ taskStatus: "queued", taskSeenAt: new Date(now + 100).toISOString() });
  // The same status again: no write (the record's updatedAt stays).
  now += 50;
  await ledger.noteStatus(keyHash, "task_s", { status: "queued", at: now + 200 });
  expect((await listed())?.updatedAt).toBe(queued?.updatedAt);
  // A read older than the one kept does not replace it.
  await ledger.noteStatus(keyHash, "task_s", { status: "processing", at: now });
  expect((await listed())?.taskStatus).toBe("queued");
  // A terminal sighting newer than the last read is what the listing shows.
  await ledger.noteSeen(keyHash, "task_s", { terminalAt: now + 5_000, status: "failed" });
  expect((await listed())?.taskStatus).toBe("failed");
  // A task no record of this key made is left alone.
  await ledger.noteStatus(hashKey(OTHER_KEY), "task_s", {
    status: "x",
    at: now,
  });
  expect((await listed())?.taskStatus).toBe("failed");
});

it("keeps the submission's status with its success: the call's note of it and the delivered mark add no write", async () => {
  const own = tempDir();
  const store = await SqliteStore.open(own.uri);
  let writes = 0;
  const replace = store.replace.bind(store);
  store.replace = (prev, next) => {
    writes++;
    return replace(prev, next);
  };
  const backoff = { ...DEFAULT_BACKOFF, ...FAST };
  const mine = new LedgerImpl(store, { retentionMs: 60_000, now: () => now, backoff, random: Math.random });
  try {
    const req = { keyHash, tool: "generate_image", endpoint: "/api/generate/image", bytes: "{}" };
    const run = await mine.run(
      req,
      async () => ({ taskId: "task_q" }),
      (x) => ({ ...x, taskStatus: "queued" }),
    );
    // What a wait-0 call does next: notes the status it shows, then delivers.
    await mine.noteStatus(keyHash, "task_q", { status: "queued", at: now + 1 });
    await run.handOver().settle(true);
    expect(writes).toBe(1);
    const [listed] = await mine.list(keyHash);
    expect(listed).toMatchObject({ state: "succeeded", delivered: true, taskStatus: "queued" });
    expect(listed?.taskSeenAt).toBe(new Date(now).toISOString());
    expect(writes).toBe(1);
  } finally {
    await mine.close();
    own.cleanup();
  }
});

it("counts a duration from the submission's acceptance, not from the record's creation before its commit", async () => {
  const created = now;
  await ledger.run(
    {
      keyHash,
      tool: "generate_image",
      endpoint: "/api/generate/image",
      bytes: '{"t":"slow"}',
      model: "img-3",
    },
    async () => {
      now += 400; // the claim's commit and the POST took 400 ms
      return { taskId: "task_slow" };
    },
    (x) => x,
  );
  expect((await ledger.taskOrigin(keyHash, "task_slow"))?.createdAt).toBe(created + 400);
  await ledger.noteSeen(keyHash, "task_slow", {
    pendingAt: created + 2400,
    terminalAt: created + 3500,
    status: "succeeded",
  });
  expect(await ledger.durations(keyHash, "img-3")).toEqual([{ pendingMs: 2000, seenMs: 3100 }]);
});
