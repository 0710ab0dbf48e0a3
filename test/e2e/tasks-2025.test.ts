/**
 * MCP Tasks in the 2025-11-25 form (VS Code Copilot, the MCP Inspector) through the built CLI over
 * loopback HTTP, in raw JSON-RPC on that revision's session wire, against the sandbox service in
 * this process: the capability and `execution.taskSupport` advertised (and tools/list still within
 * its 20,000 bytes with MCP Apps), `params.task` answered by a CreateTaskResult the SDK's schema
 * accepts, tasks/get to completed, tasks/result blocking until the end with the tool's own result
 * and the related-task meta (and delivered by the ledger's rules), tasks/list of this key's tasks
 * only, cancel saying the truth about money, and another key refused exactly as an unknown ID.
 * The 2026-07-28 wire is unchanged by it: no `tasks` capability, no `execution`.
 */
import { specTypeSchemas } from "@modelcontextprotocol/server";
import { beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { APP_MIME_TYPE, APPS_EXTENSION, type Started } from "../helpers/cli.js";
import { type TasksServer, tasksServer } from "../helpers/tasks-server.js";
import { rpc, textOf } from "../helpers/tasks-wire.js";
import { type Session2025, session2025 } from "../helpers/tasks-wire-2025.js";

const IMAGE = "POST /api/generate/image";
const VIDEO = "POST /api/generate/video";
const OTHER_KEY = `lgk_${"f".repeat(64)}`;
const TASKED = ["generate_image", "generate_video", "generate_audio", "generate_batch", "extract_video"];
const RELATED = "io.modelcontextprotocol/related-task";
const image = (prompt: string) => ({ model: "sandbox-image-fast", prompt });
const video = (prompt: string) => ({
  model: "sandbox-video-lite",
  prompt,
  parameters: { mode: "text-to-video", duration: 5 },
});

const valid = (name: "CreateTaskResult" | "GetTaskResult" | "ListTasksResult", value: unknown) => {
  const outcome = specTypeSchemas[name]["~standard"].validate(value) as { issues?: unknown[] };
  return outcome.issues ?? [];
};

const server = tasksServer();
let service: TasksServer["service"];
let cli: Started;
let s: Session2025;

beforeAll(async () => {
  ({ service, cli } = server);
  s = await session2025(cli.url);
});

/** tasks/get until the task is no longer working, at the pollInterval it gives. */
async function settle(session: Session2025, taskId: string): Promise<Record<string, unknown>[]> {
  const seen: Record<string, unknown>[] = [];
  for (let i = 0; i < 600; i++) {
    const got = await session.request("tasks/get", { taskId });
    seen.push(got.result);
    if (got.result?.status !== "working") return seen;
    await new Promise((r) => setTimeout(r, got.result.pollInterval));
  }
  throw new Error(`task ${taskId} still working`);
}

describe("MCP Tasks in the 2025-11-25 form, through the built CLI over HTTP", () => {
  it("advertises capabilities.tasks and execution.taskSupport on the five paid tools that hand tasks back", async () => {
    expect(s.init.protocolVersion).toBe("2025-11-25");
    expect(s.init.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tools = (await s.request("tools/list")).result.tools as { name: string; execution?: unknown }[];
    for (const t of tools)
      expect(t.execution, t.name).toEqual(TASKED.includes(t.name) ? { taskSupport: "optional" } : undefined);
    // With MCP Apps declared (VS Code does), the listing stays within its bound, execution included.
    const apps = await session2025(cli.url, {
      capabilities: { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } },
    });
    const listed = (await apps.request("tools/list")).result;
    expect(listed.tools.filter((t: { execution?: unknown }) => t.execution).length).toBe(TASKED.length);
    expect(Buffer.byteLength(JSON.stringify(listed))).toBeLessThanOrEqual(20_000);
    // The 2026-07-28 wire carries neither.
    const discover = await rpc(cli.url, "server/discover", {});
    expect(discover.result.capabilities).not.toHaveProperty("tasks");
    const modern = await rpc(cli.url, "tools/list", {});
    expect(JSON.stringify(modern.result.tools)).not.toContain("taskSupport");
  });

  it("answers params.task with a CreateTaskResult, then tasks/get to completed and tasks/result with the tool's result", async () => {
    const before = service.sandbox.stats.dispatches(IMAGE);
    const created = await s.request("tools/call", {
      name: "generate_image",
      arguments: image("a heron, in 2025"),
      task: { ttl: 60_000 },
    });
    expect(created.error).toBeUndefined();
    expect(valid("CreateTaskResult", created.result)).toEqual([]);
    const { task } = created.result;
    expect(task).toMatchObject({ status: "working", ttl: 24 * 60 * 60 * 1000 });
    expect(task.taskId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isInteger(task.pollInterval) && task.pollInterval > 0).toBe(true);
    for (const absent of ["ttlMs", "pollIntervalMs", "resultType"]) expect(task).not.toHaveProperty(absent);
    expect(textOf(created.result)).toContain(task.taskId);

    const seen = await settle(s, task.taskId);
    for (const got of seen) expect(valid("GetTaskResult", got)).toEqual([]);
    const final = seen.at(-1) as Record<string, unknown>;
    expect(final.status).toBe("completed");
    // This form's tasks/get carries the task alone: the result comes with tasks/result.
    expect(final).not.toHaveProperty("result");

    const result = (await s.request("tasks/result", { taskId: task.taskId })).result;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    expect(result._meta[RELATED]).toEqual({ taskId: task.taskId });
    const sc = result.structuredContent as { idempotencyKey: string; task: { id: string; status: string } };
    expect(sc.task.status).toBe("succeeded");
    expect(textOf(result)).toContain(`Task ${sc.task.id} has succeeded`);
    expect(textOf(result)).toMatch(/Gems: quoted \d+, charged \d+/);
    expect(service.sandbox.stats.dispatches(IMAGE)).toBe(before + 1);
    expect(JSON.stringify(result)).not.toContain(SANDBOX_API_KEY.slice(4));
    // Carried to the client by tasks/result: the ledger says delivered.
    const record = async () =>
      (
        await s.request("tools/call", {
          name: "list_requests",
          arguments: { idempotencyKey: sc.idempotencyKey },
        })
      ).result.structuredContent.requests[0];
    await expect.poll(record, { timeout: 3_000 }).toMatchObject({ delivered: true });
  });

  it("answers a call refused before its claim, asked as the SDK 1.x tasks client asks (task: {}), with a task whose result is the refusal", async () => {
    const before = service.sandbox.stats.dispatches(VIDEO);
    const created = await s.request("tools/call", {
      name: "generate_video",
      arguments: { model: "nope", prompt: "waves" },
      task: {},
    });
    // Not a plain result (the SDK 1.x client refuses one with an opaque -32603): a CreateTaskResult.
    expect(created.error).toBeUndefined();
    expect(valid("CreateTaskResult", created.result)).toEqual([]);
    const { task } = created.result;
    expect(task.status).toBe("completed");
    expect(textOf(created.result)).toMatch(/^INVALID_ARGUMENT: model: /);
    const got = await s.request("tasks/get", { taskId: task.taskId });
    expect(got.result.status).toBe("completed");
    const result = (await s.request("tasks/result", { taskId: task.taskId })).result;
    expect(result.isError).toBe(true);
    expect(result._meta[RELATED]).toEqual({ taskId: task.taskId });
    // Every argument error, the unknown model first.
    expect(textOf(result)).toMatch(
      /^INVALID_ARGUMENT: model: "?nope"? is not in the model catalog.*parameters\.mode/,
    );
    expect(service.sandbox.stats.dispatches(VIDEO)).toBe(before);
  });

  it("holds tasks/result until the task ends; without params.task the call stays synchronous", async () => {
    const created = await s.request("tools/call", {
      name: "generate_image",
      arguments: image("a blocking crane"),
      task: {},
    });
    const { taskId } = created.result.task;
    const result = (await s.request("tasks/result", { taskId })).result;
    expect(result._meta[RELATED]).toEqual({ taskId });
    expect(result.structuredContent.task.status).toBe("succeeded");
    expect((await s.request("tasks/get", { taskId })).result.status).toBe("completed");

    const sync = await s.request("tools/call", {
      name: "generate_image",
      arguments: { ...image("a kite"), wait: 10 },
    });
    expect(sync.result).not.toHaveProperty("task");
    expect(sync.result.structuredContent.task.status).toBe("succeeded");
    // A tool that takes no task answers as ever, task asked or not.
    const free = await s.request("tools/call", { name: "list_models", arguments: {}, task: {} });
    expect(free.result).not.toHaveProperty("task");
    expect(free.result.structuredContent.models.length).toBeGreaterThan(0);
  });

  it("lists this key's tasks only, newest first, and refuses a cursor it never gave", async () => {
    const made: string[] = [];
    for (const prompt of ["a listed owl", "a listed wren"]) {
      const created = await s.request("tools/call", {
        name: "generate_image",
        arguments: image(prompt),
        task: {},
      });
      made.push(created.result.task.taskId);
    }
    const listed = (await s.request("tasks/list")).result;
    expect(valid("ListTasksResult", listed)).toEqual([]);
    const ids = (listed.tasks as { taskId: string }[]).map((t) => t.taskId);
    expect(ids.slice(0, 2)).toEqual([made[1], made[0]]);
    expect(listed).not.toHaveProperty("nextCursor");
    const other = await session2025(cli.url, { key: OTHER_KEY });
    const theirs = (await other.request("tasks/list")).result;
    expect(theirs.tasks).toEqual([]);
    expect((await s.request("tasks/list", { cursor: "not-a-cursor" })).error?.code).toBe(-32602);
    for (const taskId of made) await s.request("tasks/result", { taskId });
  });

  it("cancel answers the task cancelled and says the truth about the money; the work goes on", async () => {
    const before = service.sandbox.stats.dispatches(VIDEO);
    const created = await s.request("tools/call", {
      name: "generate_video",
      arguments: video("a slow 2025 tide"),
      task: {},
    });
    const { taskId } = created.result.task;
    const cancelled = await s.request("tasks/cancel", { taskId });
    expect(valid("GetTaskResult", cancelled.result)).toEqual([]);
    expect(cancelled.result).toMatchObject({ taskId, status: "cancelled" });
    expect(cancelled.result.statusMessage).toMatch(/The service has no cancellation/);
    expect(cancelled.result.statusMessage).toMatch(/charged/);
    // The send in flight finishes: the task then names the service's task, which goes on.
    const named = async () => (await s.request("tasks/get", { taskId })).result;
    await expect
      .poll(named, { timeout: 5_000 })
      .toMatchObject({ statusMessage: expect.stringContaining("task_") });
    const message = (await named()).statusMessage as string;
    expect(message).toMatch(
      /no cancellation: task (task_\w+) \(identity gm-\S+\) was sent, goes on and is charged/,
    );
    const serviceTask = /task (task_\w+)/.exec(message)?.[1] ?? "";
    const polled = await s.request("tools/call", {
      name: "poll_task",
      arguments: { taskId: serviceTask, wait: 0 },
    });
    expect(polled.result.structuredContent.task.id).toBe(serviceTask);
    expect(service.sandbox.stats.dispatches(VIDEO)).toBe(before + 1);
    // Its result is that message; a second cancel is refused, the task being terminal.
    const result = (await s.request("tasks/result", { taskId })).result;
    expect(result).toMatchObject({ isError: true, _meta: { [RELATED]: { taskId } } });
    expect(textOf(result)).toBe(message);
    expect((await s.request("tasks/cancel", { taskId })).error?.code).toBe(-32602);
  });

  it("refuses another key's task exactly as an unknown one, and leaves it running", async () => {
    const created = await s.request("tools/call", {
      name: "generate_image",
      arguments: image("a private 2025 lantern"),
      task: {},
    });
    const { taskId } = created.result.task;
    const other = await session2025(cli.url, { key: OTHER_KEY });
    const unknownId = "00000000-0000-4000-8000-000000000000";
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const foreign = await other.request(method, { taskId });
      const unknown = await other.request(method, { taskId: unknownId });
      expect(foreign.error?.code, method).toBe(-32602);
      expect(foreign.error, method).toEqual(unknown.error);
    }
    const result = (await s.request("tasks/result", { taskId })).result;
    expect(result.structuredContent.task.status).toBe("succeeded");
  });
});
