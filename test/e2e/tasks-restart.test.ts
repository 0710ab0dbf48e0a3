/**
 * An MCP task outlives the process that made it: the built CLI over loopback HTTP on a SQLite
 * ledger file, stopped in the middle of a task, and a new process on the same file answers the
 * task's tasks/get and finishes its work, against the sandbox service in this process (which counts
 * dispatches). Killed while its send hung, the new process replays the identity once the old one's
 * lease lapses; stopped gracefully while waiting, it gives its lease up and the new one reads the
 * service's task again at once. One dispatch either way.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerTaskStore, type StoredTask } from "../../src/calls/mcp-task/mcp-task-store.js";
import { hashKey, openLedger } from "../../src/ledger/open-ledger.js";
import { runSandboxServer, SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";
import { callTool, pollTask, rpc, textOf } from "../helpers/tasks-wire.js";

const VIDEO = "POST /api/generate/video";
const iso = isolatedEnv();
let service: Awaited<ReturnType<typeof runSandboxServer>>;
const started: Started[] = [];
let env: Record<string, string>;

beforeAll(async () => {
  // A 5-second clip takes 5 s of real time: long enough that a loaded machine still sees it
  // running (at 2 s, the Node 24 run in CI once found it finished before the wait had begun).
  service = await runSandboxServer({ host: "127.0.0.1", port: 0, timeScale: 2 });
  env = { ...iso.env, GENERATION_BASE_URL: service.url, GENERATION_API_KEY: SANDBOX_API_KEY };
});

afterAll(async () => {
  // Those killed or stopped already have exited.
  for (const s of started) if (s.child.exitCode === null && s.child.signalCode === null) await s.stop();
  await service?.close();
  iso.cleanup();
});

async function server(): Promise<Started> {
  const s = await startHttpCli([], env);
  started.push(s);
  return s;
}

const clip = (prompt: string) => ({
  model: "sandbox-video-lite",
  prompt,
  parameters: { mode: "text-to-video", duration: 5 },
});

/** The task as the ledger's store holds it, read as another process would. */
async function storedTask(taskId: string): Promise<StoredTask | undefined> {
  const ledger = await openLedger({ storeUri: env.GENERATION_STORE ?? "" });
  try {
    return await new LedgerTaskStore(await ledger.keyed()).read(taskId, hashKey(SANDBOX_API_KEY));
  } finally {
    await ledger.close();
  }
}

async function until(check: () => Promise<boolean> | boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("an MCP task across a restart on the same ledger", () => {
  it("killed while its send hung: the next process replays the identity once the lease lapses; one dispatch", async () => {
    const first = await server();
    const before = service.sandbox.stats.dispatches(VIDEO);
    // The service records the work, then never answers: the outcome of the send is unknown.
    service.sandbox.faults.inject(VIDEO, { kind: "hang" });
    const created = await callTool(first.url, "generate_video", clip("a lighthouse, crash"), { tasks: true });
    const { taskId, statusMessage } = created.result;
    const identity = /identity (gm-\S+?)\)/.exec(statusMessage)?.[1];
    expect(identity).toBeDefined();
    await until(() => service.sandbox.stats.dispatches(VIDEO) === before + 1, "the dispatch");
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));

    const second = await server();
    const { final, seen } = await pollTask(second.url, taskId, { timeoutMs: 45_000 });
    expect(final.result.status).toBe("completed");
    const result = final.result.result;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    expect(result.structuredContent).toMatchObject({
      idempotencyKey: identity,
      task: { status: "succeeded" },
    });
    // The replay found the work the service already had: not new, not dispatched again.
    expect(result.structuredContent.created).toBe(false);
    expect(textOf(result)).toContain("not charged twice");
    expect(service.sandbox.stats.dispatches(VIDEO)).toBe(before + 1);
    // While the dead process's lease held, the new one said so and let the poller wait for it.
    expect(seen[0]?.result.status).toBe("working");
    await second.stop();
  }, 90_000);

  it("stopped gracefully while waiting: the next process reads the service's task again at once", async () => {
    const first = await server();
    const before = service.sandbox.stats.dispatches(VIDEO);
    const created = await callTool(first.url, "generate_video", clip("a lighthouse, restart"), {
      tasks: true,
    });
    const { taskId } = created.result;
    const get = async () => (await rpc(first.url, "tasks/get", { taskId }, { tasks: true })).result;
    await until(async () => /Task task_\w+ is/.test((await get()).statusMessage ?? ""), "the wait to begin");
    await first.stop();
    // The stop gave the lease up: the task in the store names no process driving it.
    expect((await storedTask(taskId))?.lease).toBeUndefined();

    const second = await server();
    const startedAt = Date.now();
    const { final } = await pollTask(second.url, taskId, { timeoutMs: 30_000 });
    // No lease to wait out: before the 15 s a lapsed lease would take (the margin is for a loaded
    // machine; the store's own word above is the proof).
    expect(Date.now() - startedAt).toBeLessThan(13_000);
    const result = final.result.result;
    expect(final.result.status).toBe("completed");
    expect(result.isError ?? false, textOf(result)).toBe(false);
    expect(result.structuredContent.created).toBe(true);
    expect(service.sandbox.stats.dispatches(VIDEO)).toBe(before + 1);
    await second.stop();
  }, 60_000);

  it("on the embedded sandbox (--sandbox): the next process finds the task the last one's sandbox made", async () => {
    // Its own ledger directory: the embedded sandbox keeps its journal beside the ledger.
    const own = isolatedEnv();
    try {
      const first = await startHttpCli(["--sandbox"], own.env);
      started.push(first);
      const created = await callTool(first.url, "generate_video", clip("a lighthouse, continued"), {
        tasks: true,
      });
      const { taskId } = created.result;
      const get = async () => (await rpc(first.url, "tasks/get", { taskId }, { tasks: true })).result;
      await until(
        async () => /Task task_\w+ is/.test((await get()).statusMessage ?? ""),
        "the wait to begin",
      );
      await first.stop();

      const second = await startHttpCli(["--sandbox"], own.env);
      started.push(second);
      const { final } = await pollTask(second.url, taskId, { timeoutMs: 40_000 });
      const result = final.result.result;
      expect(final.result.status).toBe("completed");
      expect(result.isError ?? false, textOf(result)).toBe(false);
      expect(result.structuredContent).toMatchObject({ task: { status: "succeeded" } });
      await second.stop();
    } finally {
      own.cleanup();
    }
  }, 90_000);
});
