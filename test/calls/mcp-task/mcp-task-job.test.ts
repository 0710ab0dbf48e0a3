/**
 * The seams of an MCP task's background work (src/calls/mcp-task/mcp-task-job.ts) that no call
 * through a client reaches: the task store failing right after a successful send must not turn a
 * request that was sent (and is charged) into a refusal that says nothing was sent.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { handBack } from "../../../src/calls/mcp-task/mcp-task-background.js";
import { Job, jobs } from "../../../src/calls/mcp-task/mcp-task-job.js";
import { readTask } from "../../../src/calls/mcp-task/mcp-task-read.js";
import { LedgerTaskStore, type StoredTask } from "../../../src/calls/mcp-task/mcp-task-store.js";
import { mediaSteps } from "../../../src/calls/paid/media-call.js";
import { resumable } from "../../../src/calls/paid/resumable.js";
import type { Engine } from "../../../src/mcp/context.js";
import { type Harness, harness } from "../../tools/harness.js";
import { finished, imageWork } from "./mcp-task-fixtures.js";

const IMAGE = "POST /api/generate/image";
let h: Harness;
beforeEach(async () => {
  h = await harness({ timeScale: 20 });
});
afterEach(async () => {
  vi.restoreAllMocks();
  await h.close();
});

describe("an MCP task whose store fails after the send", () => {
  it("keeps the send's outcome: the result names the identity and the service's task, not a refusal", async () => {
    const change = LedgerTaskStore.prototype.change;
    let failed = 0;
    // The write that records what the send answered fails once; every other write goes through.
    vi.spyOn(LedgerTaskStore.prototype, "change").mockImplementation(function (
      this: LedgerTaskStore,
      ...args
    ) {
      const [id, principal, fn] = args;
      return change.call(this, id, principal, (cur) => {
        const next = fn(cur);
        const sent = (s: StoredTask | undefined) => (s?.context as { sent?: unknown } | undefined)?.sent;
        if (failed === 0 && sent(next) !== undefined && sent(cur) === undefined) {
          failed++;
          throw new Error("the task store is unreachable");
        }
        return next;
      });
    });
    const created = (await handBack(
      h.engine,
      mediaSteps(h.engine, imageWork("a kite over a seam")),
    )) as unknown as {
      taskId: string;
    };
    const done = await finished(h.engine, created.taskId);
    expect(failed).toBe(1);
    expect(h.sandbox.stats.requests(IMAGE)).toBe(1);
    expect(done.status).toBe("completed");
    expect(done.result?.isError).not.toBe(true);
    const sc = done.result?.structuredContent as {
      idempotencyKey: string;
      task: { id: string; status: string };
    };
    expect(sc.task.id).toMatch(/\S/);
    expect(sc.idempotencyKey).toMatch(/\S/);
    const text = (done.result?.content as { text: string }[] | undefined)?.[0]?.text ?? "";
    expect(text).toContain(sc.task.id);
    expect(text).not.toMatch(/nothing was sent/i);
  });
});

describe("another key's tasks/get", () => {
  it("answers not found at once, never held for this process's next read of the task", async () => {
    const created = (await handBack(
      h.engine,
      mediaSteps(h.engine, imageWork("a kite, read by a stranger")),
    )) as unknown as {
      taskId: string;
    };
    const job = jobs.get(created.taskId);
    if (job === undefined) throw new Error("the task is not driven here");
    job.nextReadAt = Date.now() + 50;
    const held = vi.spyOn(Job.prototype, "nextStep");
    const stranger = Object.create(h.engine, { keyHash: { value: "another key's hash" } }) as Engine;
    expect(await readTask(stranger, created.taskId, resumable)).toBeUndefined();
    expect(held).not.toHaveBeenCalled();
    expect((await readTask(h.engine, created.taskId, resumable))?.task.taskId).toBe(created.taskId);
    expect(held).toHaveBeenCalledTimes(1);
    await finished(h.engine, created.taskId);
  });
});
