/**
 * Listing a key's records a page at a time: newest first, every record exactly once across pages,
 * filters and lookups, done by the store (SQL for SQLite) with the same answers as the generic
 * in-memory ordering other back ends use.
 */
import { afterEach, describe, expect, it } from "vitest";
import { hashKey, type Ledger, listCursor } from "../../src/ledger/open-ledger.js";
import { API_KEY, fastLedger, OTHER_KEY, tempDir } from "./ledger-helpers.js";

const keyHash = hashKey(API_KEY);
let cleanup: (() => void) | undefined;
let ledger: Ledger | undefined;

afterEach(async () => {
  await ledger?.close();
  cleanup?.();
  ledger = undefined;
});

/** A ledger holding `n` succeeded records (task t0..), created one millisecond apart, two per instant at the end. */
async function filled(n: number): Promise<Ledger> {
  const t = tempDir();
  cleanup = t.cleanup;
  let clock = 1_700_000_000_000;
  const l = await fastLedger(t.uri, { now: () => clock });
  for (let i = 0; i < n; i++) {
    // The last two share an instant: ties are ordered by identity.
    if (i < n - 1) clock += 1;
    const bytes = JSON.stringify({
      model: i % 2 ? "img-b" : "img-a",
      prompt: `scene number ${i} ${"x".repeat(200)}`,
    });
    await l.run(
      { keyHash, tool: "generate_image", endpoint: "/api/generate/image", bytes },
      async () => ({ id: `t${i}` }),
      (r) => ({ taskId: r.id }),
    );
  }
  await l.run(
    { keyHash: hashKey(OTHER_KEY), tool: "generate_image", endpoint: "/api/generate/image", bytes: "{}" },
    async () => ({ id: "theirs" }),
    (r) => ({ taskId: r.id }),
  );
  ledger = l;
  return l;
}

describe("ledger list pages", () => {
  it("pages through every record once, newest first, with the model and the prompt's start", async () => {
    const l = await filled(45);
    const all = await l.list(keyHash);
    expect(all).toHaveLength(45);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const rows = await l.list(keyHash, { limit: 20, ...(cursor ? { cursor } : {}) });
      seen.push(...rows.map((r) => r.idempotencyKey));
      const last = rows.at(-1);
      if (rows.length < 20 || last === undefined) break;
      cursor = listCursor(last);
    }
    expect(seen).toEqual(all.map((r) => r.idempotencyKey));
    expect(new Set(seen).size).toBe(45);
    const times = all.map((r) => Date.parse(r.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(all.find((r) => r.taskId === "t44")).toMatchObject({ model: "img-a" });
    expect(all[all.length - 1]).toMatchObject({ taskId: "t0", model: "img-a" });
    expect(all[all.length - 1]?.prompt).toMatch(/^scene number 0 x+…$/);
    expect(all[all.length - 1]?.prompt?.length).toBe(80);
  });

  it("looks a record up by task ID or identity, and never shows another key's", async () => {
    const l = await filled(5);
    const [byTask] = await l.list(keyHash, { taskId: "t3" });
    expect(byTask?.taskId).toBe("t3");
    const byIdentity = await l.list(keyHash, { idempotencyKey: byTask?.idempotencyKey ?? "" });
    expect(byIdentity.map((r) => r.taskId)).toEqual(["t3"]);
    expect(await l.list(keyHash, { taskId: "theirs" })).toEqual([]);
    const theirs = await l.list(hashKey(OTHER_KEY));
    expect(await l.list(keyHash, { idempotencyKey: theirs[0]?.idempotencyKey ?? "" })).toEqual([]);
    expect(await l.list(keyHash, { state: "open" })).toHaveLength(5);
    await l.markDelivered(keyHash, byTask?.idempotencyKey ?? "", true);
    expect(await l.list(keyHash, { state: "open" })).toHaveLength(4);
    expect(await l.list(keyHash, { state: "closed" })).toEqual([]);
  });

  it("'unfinished' adds accepted tasks not seen finish to the open records, in SQL as in memory", async () => {
    const l = await filled(6);
    const id = async (taskId: string) => (await l.list(keyHash, { taskId }))[0]?.idempotencyKey ?? "";
    for (const t of ["t1", "t2", "t3", "t4", "t5"]) await l.markDelivered(keyHash, await id(t), true);
    await l.noteStatus(keyHash, "t1", { status: "processing", at: 1_700_000_000_100 });
    await l.noteStatus(keyHash, "t2", { status: "succeeded", at: 1_700_000_000_100 });
    await l.noteSeen(keyHash, "t4", { terminalAt: 1_700_000_000_100, status: "failed" });
    await l.noteStatus(keyHash, "t5", { status: "queued", at: 1_700_000_000_100 });
    await l.noteStatus(keyHash, "t5", { status: "partial", at: 1_700_000_000_200 });
    // t0: not delivered (open); t1 running; t3 never read since submission.
    const unfinished = await l.list(keyHash, { state: "unfinished" });
    expect(unfinished.map((r) => r.taskId)).toEqual(["t3", "t1", "t0"]);
    expect((await l.list(keyHash, { state: "open" })).map((r) => r.taskId)).toEqual(["t0"]);
    // The same answer, a record at a time, through the generic filter (a lookup by identity).
    for (const r of await l.list(keyHash)) {
      const one = await l.list(keyHash, { idempotencyKey: r.idempotencyKey, state: "unfinished" });
      expect(one.length, r.taskId).toBe(["t0", "t1", "t3"].includes(r.taskId ?? "") ? 1 : 0);
    }
  });

  it("refuses a cursor it did not make", async () => {
    const l = await filled(1);
    await expect(l.list(keyHash, { cursor: "not-a-cursor" })).rejects.toThrow(/cursor/);
  });

  it("answers a page from the store (SQL) exactly as the full, sorted listing would", async () => {
    const l = await filled(1_000);
    const page = await l.list(keyHash, { limit: 21 });
    const all = await l.list(keyHash);
    expect(page).toEqual(all.slice(0, 21));
    const last = page.at(-1);
    if (last === undefined) throw new Error("an empty page");
    const second = await l.list(keyHash, { limit: 21, cursor: listCursor(last) });
    expect(second).toEqual(all.slice(21, 42));
  }, 60_000);
});
