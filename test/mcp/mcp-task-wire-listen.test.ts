/**
 * The task part of a 2026-07-28 listen as read and written (src/mcp/mcp-task-wire-listen.ts): the IDs a
 * listen names, checked and capped; -32021 without the extension; the acknowledgement with the
 * agreed IDs; a notification stamped with the listen's ID.
 */
import { describe, expect, it } from "vitest";
import {
  acknowledges,
  MAX_LISTENED_TASKS,
  taskListenAsk,
  taskNotification,
  withAgreedTasks,
} from "../../src/mcp/mcp-task-wire-listen.js";

const META = (tasks: boolean) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": tasks
    ? { extensions: { "io.modelcontextprotocol/tasks": {} } }
    : {},
});
const listen = (notifications: unknown, tasks = true) => ({
  jsonrpc: "2.0",
  id: 4,
  method: "subscriptions/listen",
  params: { notifications, _meta: META(tasks) },
});

describe("a listen's tasks", () => {
  it("names none: left to the SDK", () => {
    expect(taskListenAsk(listen({ toolsListChanged: true }))).toBeUndefined();
    expect(taskListenAsk({})).toBeUndefined();
  });

  it("refuses a malformed list (-32602) and a request not declaring the extension (-32021)", () => {
    for (const bad of ["x", [1], [""], ["a".repeat(129)]])
      expect(taskListenAsk(listen({ taskIds: bad }))).toMatchObject({ ok: false, error: { code: -32602 } });
    expect(taskListenAsk(listen({ taskIds: ["t"] }, false))).toMatchObject({
      ok: false,
      error: {
        code: -32021,
        data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
      },
    });
  });

  it("keeps distinct IDs, at most MAX_LISTENED_TASKS of them", () => {
    const ids = Array.from({ length: MAX_LISTENED_TASKS + 5 }, (_, i) => `t${i}`);
    const ask = taskListenAsk(listen({ taskIds: ["t0", ...ids] }));
    expect(ask).toEqual({ ok: true, taskIds: ids.slice(0, MAX_LISTENED_TASKS) });
  });

  it("acknowledges the agreed IDs beside what the SDK agreed, and stamps notifications", () => {
    const ack = {
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: {
        notifications: { toolsListChanged: true },
        _meta: { "io.modelcontextprotocol/subscriptionId": 4 },
      },
    };
    expect(acknowledges(ack, 4)).toBe(true);
    expect(acknowledges(ack, 5)).toBe(false);
    expect(withAgreedTasks(ack, ["t"])).toMatchObject({
      params: { notifications: { toolsListChanged: true, taskIds: ["t"] } },
    });
    expect(withAgreedTasks(ack, [])).toBe(ack);
    const task = { taskId: "t", status: "working" as const, createdAt: "x", lastUpdatedAt: "x", ttlMs: 1 };
    expect(taskNotification(task, 4)).toEqual({
      jsonrpc: "2.0",
      method: "notifications/tasks",
      params: { ...task, _meta: { "io.modelcontextprotocol/subscriptionId": 4 } },
    });
  });
});
