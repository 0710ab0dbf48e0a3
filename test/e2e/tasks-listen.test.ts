/**
 * Task status pushed on a 2026-07-28 `subscriptions/listen` (SEP-2663) through the built CLI over
 * loopback HTTP, in raw JSON-RPC: a task-augmented generation, then a listen naming it; the
 * acknowledgement lists the task, `notifications/tasks` follow it from working to completed with
 * the result inline (what `tasks/get` answers), and the stream then closes gracefully. Another
 * key's listen to the same ID is answered exactly as one naming an unknown ID, and gets nothing;
 * a listen that does not declare the extension is refused (-32021). A task finishing on another
 * replica (two servers on one SQLite ledger) is still pushed to the listen on this one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxServer, SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";
import { listenTasks, type Message, taskNotes } from "../helpers/tasks-listen.js";
import { callTool, rpc, textOf } from "../helpers/tasks-wire.js";
import { PROTOCOL_2025, session2025 } from "../helpers/tasks-wire-2025.js";

const OTHER_KEY = `lgk_${"f".repeat(64)}`;
const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";
const clip = (prompt: string) => ({
  model: "sandbox-video-lite",
  prompt,
  parameters: { mode: "text-to-video", duration: 5 },
});

const iso = isolatedEnv();
let service: Awaited<ReturnType<typeof runSandboxServer>>;
let one: Started;
let two: Started;

beforeAll(async () => {
  service = await runSandboxServer({ host: "127.0.0.1", port: 0 });
  const env = {
    ...iso.env,
    GENERATION_BASE_URL: service.url,
    GENERATION_API_KEY: SANDBOX_API_KEY,
    GENERATION_CONFIRM_ABOVE_GEMS: "50",
  };
  // Two replicas on one ledger file: a task made through one is driven by that one alone.
  [one, two] = await Promise.all([startHttpCli([], env), startHttpCli([], env)]);
}, 30_000);

afterAll(async () => {
  await Promise.all([one?.stop(), two?.stop()]);
  await service?.close();
  iso.cleanup();
});

const isAck = (m: Message) => m.method === "notifications/subscriptions/acknowledged";
const completed = (taskId: string) => (m: Message) =>
  m.method === "notifications/tasks" && m.params?.taskId === taskId && m.params?.status === "completed";

async function startTask(url: string, prompt: string): Promise<string> {
  const created = await callTool(url, "generate_video", clip(prompt), { tasks: true });
  expect(created.result?.resultType, JSON.stringify(created)).toBe("task");
  return created.result.taskId as string;
}

describe("notifications/tasks through subscriptions/listen (2026-07-28)", () => {
  it("acknowledges the task, pushes working then completed with the result, then ends the listen", async () => {
    const taskId = await startTask(one.url, "a lighthouse, listened to");
    const l = await listenTasks(one.url, { taskIds: [taskId, "not-a-task"] }, { tasks: true, id: 7 });
    try {
      const ack = await l.next(isAck);
      expect(ack.params.notifications).toEqual({ taskIds: [taskId] });
      expect(ack.params._meta[SUBSCRIPTION]).toBe(7);
      const done = await l.next(completed(taskId), 45_000);
      const notes = taskNotes(l, taskId);
      expect(l.messages.indexOf(ack)).toBe(0);
      expect(notes[0]?.params.status).toBe("working");
      expect(notes.every((m) => m.params._meta[SUBSCRIPTION] === 7)).toBe(true);
      const result = done.params.result;
      expect(result.isError ?? false, textOf(result)).toBe(false);
      expect(result.structuredContent.task.status).toBe("succeeded");
      // Exactly what tasks/get answers for the finished task.
      const got = await rpc(one.url, "tasks/get", { taskId }, { tasks: true });
      const { _meta, ...pushed } = done.params;
      expect(pushed).toEqual(strip(got.result));
      // Nothing more to follow: the listen's graceful close, answering its ID.
      await l.ended;
      expect(l.messages.at(-1)).toMatchObject({ id: 7, result: { resultType: "complete" } });
    } finally {
      l.close();
    }
  }, 60_000);

  it("another key's listen to the task is answered as for an unknown ID, and gets nothing", async () => {
    const taskId = await startTask(one.url, "a lighthouse, not theirs");
    const foreign = await listenTasks(one.url, { taskIds: [taskId] }, { tasks: true, key: OTHER_KEY, id: 1 });
    const unknown = await listenTasks(
      one.url,
      { taskIds: ["00000000-0000-4000-8000-000000000000"] },
      { tasks: true, key: OTHER_KEY, id: 1 },
    );
    await Promise.all([foreign.ended, unknown.ended]);
    expect(foreign.messages).toEqual(unknown.messages);
    expect(foreign.messages.some((m) => m.method === "notifications/tasks")).toBe(false);
    expect(foreign.messages[0]?.params.notifications).toEqual({});
    // The owner's own listen still follows it.
    const own = await listenTasks(one.url, { taskIds: [taskId] }, { tasks: true });
    expect((await own.next(isAck)).params.notifications.taskIds).toEqual([taskId]);
    await own.next(completed(taskId), 45_000);
    own.close();
  }, 60_000);

  it("refuses a listen naming tasks without declaring the extension (-32021)", async () => {
    const l = await listenTasks(one.url, { taskIds: ["x"] }, { id: 3 });
    expect(l.error?.code).toBe(-32021);
    expect(l.error?.data).toEqual({
      requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
    });
  });

  it("pushes a task that finishes on another replica sharing the ledger", async () => {
    const taskId = await startTask(one.url, "a lighthouse, on the other replica");
    const l = await listenTasks(two.url, { taskIds: [taskId] }, { tasks: true });
    try {
      expect((await l.next(isAck)).params.notifications.taskIds).toEqual([taskId]);
      const done = await l.next(completed(taskId), 45_000);
      expect(done.params.result.isError ?? false, textOf(done.params.result)).toBe(false);
      await l.ended;
    } finally {
      l.close();
    }
  }, 60_000);
});

describe("2025-11-25: the task's end told on the session's standalone stream", () => {
  it("sends notifications/tasks/status with the completed task on the session's GET stream", async () => {
    const s = await session2025(one.url);
    const abort = new AbortController();
    const stream = await fetch(one.url, {
      signal: abort.signal,
      headers: {
        accept: "text/event-stream",
        "mcp-protocol-version": PROTOCOL_2025,
        "mcp-session-id": s.sessionId() ?? "",
      },
    });
    expect(stream.status).toBe(200);
    const seen: Message[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let text = "";
      for await (const chunk of stream.body as ReadableStream<Uint8Array>) {
        const lines = (text + decoder.decode(chunk, { stream: true })).split("\n");
        text = lines.pop() ?? "";
        for (const line of lines.filter((l) => l.startsWith("data:")))
          seen.push(JSON.parse(line.slice(5)) as Message);
      }
    })().catch(() => {});
    const created = await s.request("tools/call", {
      name: "generate_image",
      arguments: { model: "sandbox-image-fast", prompt: "a heron, told in 2025" },
      task: {},
    });
    const taskId = created.result.task.taskId as string;
    await expect
      .poll(() => seen.find((m) => m.method === "notifications/tasks/status")?.params, { timeout: 30_000 })
      .toMatchObject({ taskId, status: "completed" });
    abort.abort();
    await reading;
  }, 45_000);
});

/** tasks/get's answer without the fields of a result envelope. */
function strip(result: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _type, _meta: _m, ...task } = result;
  return task;
}
