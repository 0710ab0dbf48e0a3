/**
 * list_requests at scale: a small page by default (the answer stays far under hosts' output caps
 * with 1,000 records), a cursor to the next page, lookups by task ID and identity, and text that
 * shows each record's model and the start of its prompt.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { drive, fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, harness, structured, textOf } from "./harness.js";

let h: Harness | undefined;
fakeTimeEach();
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Page {
  requests: Array<{ idempotencyKey: string; taskId?: string; model?: string; tool: string }>;
  nextCursor?: string;
}

/**
 * Records made through the ledger itself, as the paid tools make them (no service call needed),
 * each in a later (fake) millisecond than the one before: records of one millisecond have no order among
 * them, and the page assertions below name exact records.
 */
async function records(x: Harness, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    vi.advanceTimersByTime(1);
    const bytes = JSON.stringify({
      model: `model-${i % 3}`,
      prompt: `harbour number ${i} at dawn, ${"wide ".repeat(30)}`,
    });
    await drive(
      x.ledger.run(
        { keyHash: x.engine.keyHash, tool: "generate_image", endpoint: "/api/generate/image", bytes },
        async () => ({ id: `task_${i}` }),
        (r) => ({ taskId: r.id }),
      ),
    );
  }
}

describe("list_requests", () => {
  it("answers 1,000 records with a page of 20 and a cursor, well under 16 KiB", async () => {
    h = await harness();
    await records(h, 1_000);
    const first = await h.call("list_requests", {});
    expect(JSON.stringify(first).length).toBeLessThan(16 * 1024);
    const page = structured<Page>(first);
    expect(page.requests).toHaveLength(20);
    expect(page.requests[0]?.taskId).toBe("task_999");
    expect(page.nextCursor).toBeDefined();
    expect(textOf(first)).toContain('model-0 "harbour number 999 at dawn');
    expect(textOf(first)).toContain(`cursor "${page.nextCursor}"`);

    const second = structured<Page>(await h.call("list_requests", { cursor: page.nextCursor, limit: 100 }));
    expect(second.requests).toHaveLength(100);
    expect(second.requests[0]?.taskId).toBe("task_979");
    const seen = new Set([...page.requests, ...second.requests].map((r) => r.idempotencyKey));
    expect(seen.size).toBe(120);
  }, 60_000);

  it("finds one request by task ID or identity, and ends without a cursor", async () => {
    h = await harness();
    await records(h, 3);
    const byTask = structured<Page>(await h.call("list_requests", { taskId: "task_1" }));
    expect(byTask.requests.map((r) => r.taskId)).toEqual(["task_1"]);
    expect(byTask.nextCursor).toBeUndefined();
    const identity = byTask.requests[0]?.idempotencyKey ?? "";
    const byIdentity = await h.call("list_requests", { idempotencyKey: identity });
    expect(structured<Page>(byIdentity).requests.map((r) => r.taskId)).toEqual(["task_1"]);
    expect(textOf(byIdentity)).toContain(`with identity ${identity}`);
    expect(structured<Page>(await h.call("list_requests", { taskId: "task_none" })).requests).toEqual([]);
  });

  it("refuses a limit past 100 and a cursor it never gave, naming the field", async () => {
    h = await harness();
    expect(textOf(await h.call("list_requests", { limit: 1_000 }))).toMatch(/^INVALID_ARGUMENT: limit/);
    expect(textOf(await h.call("list_requests", { cursor: "made-up" }))).toMatch(/^INVALID_ARGUMENT: cursor/);
  });
});
