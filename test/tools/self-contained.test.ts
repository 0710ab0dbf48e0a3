/**
 * Results a host's model can act on whatever it is shown (issue 32): a failed generation is
 * `isError` on every path (the synchronous answer, poll_task, an MCP task's result) with its task,
 * identity and `next` still in structuredContent; and outside MCP tasks no accepted `wait`
 * outlasts one call (src/mcp/budget.ts, boundedWait): it is held to the cap and the answer says so.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { handBack } from "../../src/calls/mcp-task/mcp-task-background.js";
import { taskStore } from "../../src/calls/mcp-task/mcp-task-record.js";
import type { StoredTask } from "../../src/calls/mcp-task/mcp-task-store.js";
import { mediaSteps } from "../../src/calls/paid/media-call.js";
import { buildMediaBody } from "../../src/client/requests.js";
import { DEFAULT_BUDGET_CAP_MS, DEFAULT_WAIT_CAP_SECONDS } from "../../src/config/time-limits.js";
import { SANDBOX_MARKERS } from "../../src/sandbox/tasks.js";
import { drive, fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, harness, textOf } from "./harness.js";

let h: Harness | undefined;
fakeTimeEach();
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Shown = { idempotencyKey?: string; task: { id: string; status: string }; next: string };
const shown = (r: { structuredContent?: unknown }): Shown => r.structuredContent as Shown;
const FAILING = { model: "sandbox-image-fast", prompt: `a kite ${SANDBOX_MARKERS.fail}` };

async function finished(run: Harness, taskId: string): Promise<StoredTask> {
  const store = await taskStore(run.engine);
  for (let i = 0; i < 400; i++) {
    const rec = await store.read(taskId, run.engine.keyHash);
    if (rec !== undefined && rec.status !== "working") return rec;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`task ${taskId} did not finish`);
}

describe("a failed generation", () => {
  it("is isError on the synchronous answer and on poll_task, with its task, identity and next kept", async () => {
    h = await harness();
    const sync = await h.call("generate_image", { ...FAILING, wait: 20 });
    expect(sync.isError).toBe(true);
    const s = shown(sync);
    expect(s.task.status).toBe("failed");
    expect(s.idempotencyKey).toMatch(/^gm-/);
    expect(s.next).toMatch(/^stop polling and tell the user why/);
    expect(textOf(sync)).toContain(`Next: ${s.next}`);
    expect(textOf(sync)).toContain(s.task.id);

    const polled = await h.call("poll_task", { taskId: s.task.id });
    expect(polled.isError).toBe(true);
    expect(shown(polled).task.status).toBe("failed");
    expect(shown(polled).next).toBe(s.next);

    // A generation that succeeds is no error on either path.
    const fine = await h.call("generate_image", { model: "sandbox-image-fast", prompt: "a kite", wait: 20 });
    expect(fine.isError ?? false).toBe(false);
    expect(shown(fine).task.status).toBe("succeeded");
  });

  it("is isError in an MCP task's result too", async () => {
    const run = await harness();
    h = run;
    const steps = mediaSteps(run.engine, {
      tool: "generate_image",
      kind: "image",
      operation: undefined,
      built: buildMediaBody("image", FAILING),
      idempotencyKey: undefined,
      ceiling: { maxGems: undefined, source: "none" },
      dirs: undefined,
    });
    const created = (await handBack(run.engine, steps)) as unknown as { taskId: string };
    const done = await drive(finished(run, created.taskId));
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBe(true);
    const sc = done.result?.structuredContent as Shown;
    expect(sc.task.status).toBe("failed");
    expect(sc.next).toMatch(/^stop polling/);
  });
});

describe("a task-augmented 2025-11-25 call the user declined", () => {
  it("answers a task completed with the refusal, as the SDK 1.x tasks client reads it", async () => {
    h = await harness({ config: { confirmAboveGems: 5 }, elicit: () => ({ action: "decline" }) });
    const run = h;
    const loose = z.looseObject({});
    const params = {
      name: "generate_image",
      arguments: { model: "sandbox-image-pro", prompt: "x" },
      task: {},
    };
    const created = (await drive(run.mcp.request({ method: "tools/call", params }, loose))) as {
      task: { taskId: string; status: string };
      content: { text: string }[];
    };
    expect(created.task.status).toBe("completed");
    expect(created.content[0]?.text).toMatch(/^USER_DECLINED: /);
    const result = (await drive(
      run.mcp.request({ method: "tasks/result", params: { taskId: created.task.taskId } }, loose),
    )) as { isError?: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/^USER_DECLINED: .*nothing was sent/);
    expect(run.sandbox.stats.dispatches()).toBe(0);
  });
});

describe("output URLs", () => {
  it("come as resource links too, on the submission, poll_task and save_outputs", async () => {
    h = await harness();
    const run = h;
    const gen = await run.call("generate_image", { model: "sandbox-image-fast", prompt: "a kite", wait: 20 });
    const taskId = shown(gen).task.id;
    const links = (r: { content?: unknown }) =>
      (r.content as { type: string; uri?: string }[])
        .filter((c) => c.type === "resource_link")
        .map((c) => c.uri);
    const expected = [`generation://tasks/${taskId}/outputs/0`];
    expect(links(gen)).toEqual(expected);
    expect(links(await run.call("poll_task", { taskId }))).toEqual(expected);
    expect(links(await run.call("save_outputs", { taskId }))).toEqual(expected);
  });
});

describe("a wait longer than one call", () => {
  it("is held to the cap on generate_image, and the answer says so and how to wait on", async () => {
    // timeScale 1 and the slow marker: the task takes a minute, longer than any call.
    h = await harness({ timeScale: 1 });
    const started = Date.now();
    const r = await h.call("generate_image", {
      model: "sandbox-image-fast",
      prompt: `a harbour ${SANDBOX_MARKERS.slow}`,
      wait: 120,
    });
    expect(Date.now() - started).toBeLessThanOrEqual(DEFAULT_BUDGET_CAP_MS);
    expect(r.isError ?? false).toBe(false);
    const s = shown(r);
    expect(["queued", "processing"]).toContain(s.task.status);
    expect(textOf(r)).toContain(`wait 120 s was held to ${DEFAULT_WAIT_CAP_SECONDS} s`);
    expect(s.next).toContain(`"taskId": "${s.task.id}"`);
    // The wait suggested for the next poll never exceeds what one call may take either.
    const suggested = Number(/"wait": (\d+)/.exec(s.next)?.[1]);
    expect(suggested).toBeLessThanOrEqual(DEFAULT_WAIT_CAP_SECONDS);

    const pollStarted = Date.now();
    const polled = await h.call("poll_task", { taskId: s.task.id, wait: 600 });
    expect(Date.now() - pollStarted).toBeLessThanOrEqual(DEFAULT_BUDGET_CAP_MS);
    expect(textOf(polled)).toContain(`wait 600 s was held to ${DEFAULT_WAIT_CAP_SECONDS} s`);
    expect(shown(polled).task.id).toBe(s.task.id);
  });

  it("says nothing of a wait within the cap", async () => {
    h = await harness();
    const r = await h.call("generate_image", { model: "sandbox-image-fast", prompt: "a kite", wait: 20 });
    expect(textOf(r)).not.toMatch(/was held to/);
    expect(textOf(await h.call("poll_task", { taskId: shown(r).task.id, wait: 5 }))).not.toMatch(
      /was held to/,
    );
  });
});
