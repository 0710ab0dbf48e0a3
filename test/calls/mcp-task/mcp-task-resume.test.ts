/**
 * Taking over an MCP task whose process stopped (src/calls/mcp-task/mcp-task-resume.ts), for the two cases a restart
 * test cannot stop at exactly: the ledger knows the service's task but the task never recorded it
 * (read again, never sent again), and the ledger closed the request as refused (that refusal is
 * the result, nothing is sent). On an in-process engine, sandbox and SQLite ledger.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { taskStore } from "../../../src/calls/mcp-task/mcp-task-record.js";
import { takeOver } from "../../../src/calls/mcp-task/mcp-task-resume.js";
import type { StoredTask } from "../../../src/calls/mcp-task/mcp-task-store.js";
import { type MediaWork, mediaSteps } from "../../../src/calls/paid/media-call.js";
import { resumable } from "../../../src/calls/paid/resumable.js";
import { budgetOf } from "../../../src/mcp/budget.js";
import type { ToolContext } from "../../../src/mcp/context.js";
import { type Harness, harness } from "../../tools/harness.js";
import { finished, imageWork } from "./mcp-task-fixtures.js";

const IMAGE = "POST /api/generate/image";
let h: Harness;
beforeEach(async () => {
  h = await harness({ timeScale: 20 });
});
afterEach(() => h.close());

const quiet: ToolContext = {
  signal: new AbortController().signal,
  canElicit: false,
  offersRoots: false,
  inputResponses: undefined,
  answered: undefined,
  rendersApps: false,
  progress: async () => {},
  onDelivery: () => {},
};

const work = imageWork;

/** A task as a process that stopped left it: working, its lease lapsed, nothing recorded of the send. */
async function orphan(identity: string, w: MediaWork): Promise<StoredTask> {
  const store = await taskStore(h.engine);
  const steps = mediaSteps(h.engine, w);
  const { taskId } = await store.create({
    principal: h.engine.keyHash,
    ttlMs: 60_000,
    context: { identity, work: steps.work },
    lease: { owner: "a stopped process", until: Date.now() - 1 },
  });
  const rec = await store.read(taskId, h.engine.keyHash);
  if (rec === undefined) throw new Error("the task was not stored");
  return rec;
}

const text = (rec: StoredTask) => (rec.result?.content as { text: string }[] | undefined)?.[0]?.text ?? "";

describe("taking over a task whose process stopped", () => {
  it("reads the service's task again where only the ledger knew it: no second send", async () => {
    const w = work("a kite, accepted before the crash");
    const run = await mediaSteps(h.engine, w).send(quiet, budgetOf(20_000));
    const sends = h.sandbox.stats.requests(IMAGE);
    const rec = await orphan(run.identity, w);
    expect(await takeOver(h.engine, rec, resumable)).toBe(true);
    const done = await finished(h.engine, rec.taskId);
    expect(done.status).toBe("completed");
    expect(done.result?.structuredContent).toMatchObject({
      idempotencyKey: run.identity,
      task: { id: run.result.submission.task.id, status: "succeeded" },
    });
    expect(text(done)).toContain("not charged twice");
    expect(h.sandbox.stats.requests(IMAGE)).toBe(sends);
  });

  it("answers with the refusal where the ledger closed the request: nothing is sent again", async () => {
    const w = work("a kite, refused before the crash");
    h.sandbox.faults.inject(IMAGE, { status: 409, code: "REQUEST_FAILED", message: "claim released" });
    const refused = await mediaSteps(h.engine, w)
      .send(quiet, budgetOf(20_000))
      .catch((err: { identity: string }) => err);
    const identity = (refused as { identity: string }).identity;
    const sends = h.sandbox.stats.requests(IMAGE);
    const rec = await orphan(identity, w);
    expect(await takeOver(h.engine, rec, resumable)).toBe(true);
    const done = await finished(h.engine, rec.taskId);
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBe(true);
    expect(text(done)).toMatch(/^REQUEST_FAILED: .*claim released/);
    expect(text(done)).toContain(`Identity (idempotencyKey): ${identity}, now closed`);
    expect(h.sandbox.stats.requests(IMAGE)).toBe(sends);
  });

  it("leaves a task another process holds", async () => {
    const w = work("a kite, still held");
    const run = await mediaSteps(h.engine, w).send(quiet, budgetOf(20_000));
    const rec = await orphan(run.identity, w);
    const store = await taskStore(h.engine);
    const held = await store.change(rec.taskId, h.engine.keyHash, (cur) => ({
      ...cur,
      lease: { owner: "a live process", until: Date.now() + 60_000 },
    }));
    expect(await takeOver(h.engine, held as StoredTask, resumable)).toBe(false);
    expect((await store.read(rec.taskId, h.engine.keyHash))?.lease?.owner).toBe("a live process");
  });

  it("refuses a task whose work names a tool no task goes on with, and sends nothing", async () => {
    const w = { ...work("a kite from a tool that is gone"), tool: "generate_hologram" };
    const rec = await orphan("ident-unknown-tool", w as MediaWork);
    const sends = h.sandbox.stats.requests(IMAGE);
    await expect(takeOver(h.engine, rec, resumable)).rejects.toThrow(
      /no task can go on with: "generate_hologram"/,
    );
    expect(h.sandbox.stats.requests(IMAGE)).toBe(sends);
  });
});
