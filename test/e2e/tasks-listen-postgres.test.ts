/**
 * A task finishing on one replica is pushed to a listen opened on another, both on one PostgreSQL
 * ledger (the deployment docs/deploying.md describes), through the built CLI over loopback HTTP:
 * the listen's process never drives the task, and learns of each change by reading the shared
 * store (src/calls/mcp-task/mcp-task-watch.ts). Another key's listen through either replica gets
 * nothing. Skipped, loudly, where PostgreSQL does not answer (failed under CI).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxServer, SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";
import { listenTasks, type Message, taskNotes } from "../helpers/tasks-listen.js";
import { callTool, textOf } from "../helpers/tasks-wire.js";
import { available, freshStore, type StoreFixture } from "../ledger/stores.js";

const ready = runnableOrSkipped(
  (await available("postgres")) ? undefined : "PostgreSQL does not answer (LEDGER_TEST_POSTGRES)",
  "the listen's replica test on PostgreSQL (test/e2e/tasks-listen-postgres.test.ts)",
);
const iso = isolatedEnv();
let service: Awaited<ReturnType<typeof runSandboxServer>>;
let store: StoreFixture;
const replicas: Started[] = [];

beforeAll(async () => {
  if (!ready) return;
  service = await runSandboxServer({ host: "127.0.0.1", port: 0 });
  store = await freshStore("postgres");
  const env = {
    ...iso.env,
    GENERATION_STORE: store.uri,
    GENERATION_BASE_URL: service.url,
    GENERATION_API_KEY: SANDBOX_API_KEY,
    GENERATION_CONFIRM_ABOVE_GEMS: "50",
  };
  replicas.push(await startHttpCli([], env), await startHttpCli([], env));
}, 40_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await service?.close();
  await store?.cleanup();
  iso.cleanup();
});

const isAck = (m: Message) => m.method === "notifications/subscriptions/acknowledged";

describe.runIf(ready)("notifications/tasks across replicas on one PostgreSQL ledger", () => {
  it("pushes working to completed, with the result, to a listen on the replica that does not drive it", async () => {
    const [one, two] = replicas as [Started, Started];
    const clip = {
      model: "sandbox-video-lite",
      prompt: "a pier, on PostgreSQL",
      parameters: { mode: "text-to-video", duration: 5 },
    };
    const created = await callTool(one.url, "generate_video", clip, { tasks: true });
    const taskId = created.result?.taskId as string;
    expect(created.result?.resultType, JSON.stringify(created)).toBe("task");
    const l = await listenTasks(two.url, { taskIds: [taskId] }, { tasks: true });
    const foreign = await listenTasks(
      two.url,
      { taskIds: [taskId] },
      { tasks: true, key: `lgk_${"9".repeat(64)}` },
    );
    try {
      expect((await l.next(isAck)).params.notifications.taskIds).toEqual([taskId]);
      const done = await l.next(
        (m) => m.method === "notifications/tasks" && m.params?.status === "completed",
        45_000,
      );
      expect(taskNotes(l, taskId)[0]?.params.status).toBe("working");
      expect(done.params.result.isError ?? false, textOf(done.params.result)).toBe(false);
      await foreign.ended;
      expect(foreign.messages.some((m) => m.method === "notifications/tasks")).toBe(false);
    } finally {
      l.close();
      foreign.close();
    }
  }, 60_000);
});
