/**
 * Task status pushed on a 2026-07-28 `subscriptions/listen` over stdio (SEP-2663), the built CLI
 * spoken to line by line as Claude Code runs a local server: server/discover, a task-augmented
 * generation, then a listen naming it; the acknowledgement lists the task, `notifications/tasks`
 * carry its states to completed with the result, each with the listen's ID, and the listen then
 * closes gracefully. An unknown ID is left out; a listen not declaring the extension gets -32021
 * and nothing after it.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, isolatedEnv } from "../helpers/cli.js";
import { envelope, textOf } from "../helpers/tasks-wire.js";

// biome-ignore lint/suspicious/noExplicitAny: raw wire messages are read field by field.
type Message = Record<string, any>;
const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

const iso = isolatedEnv();
let child: ChildProcessWithoutNullStreams;
const messages: Message[] = [];

beforeAll(() => {
  child = spawn(process.execPath, [CLI, "--sandbox"], { env: iso.env, stdio: ["pipe", "pipe", "pipe"] });
  let partial = "";
  child.stdout.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) messages.push(JSON.parse(line) as Message);
  });
});

afterAll(async () => {
  const exited = new Promise((r) => child.once("exit", r));
  child.stdin.end();
  await exited;
  iso.cleanup();
});

const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
let nextId = 1;
function request(method: string, params: object, meta = envelope({ tasks: true })): number {
  const id = nextId++;
  send({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } });
  return id;
}
const arrived = (test: (m: Message) => boolean, timeout = 45_000) =>
  expect.poll(() => messages.find(test), { timeout, interval: 50 }).toBeDefined();
const find = (test: (m: Message) => boolean) => messages.find(test) as Message;
const onListen = (id: number) => (m: Message) => m.params?._meta?.[SUBSCRIPTION] === id || m.id === id;

describe("notifications/tasks through subscriptions/listen over stdio", () => {
  it("acknowledges the task, pushes its states to completed with the result, then closes", async () => {
    const discover = request("server/discover", {});
    await arrived((m) => m.id === discover);
    const call = request("tools/call", {
      name: "generate_video",
      arguments: {
        model: "sandbox-video-lite",
        prompt: "a buoy",
        parameters: { mode: "text-to-video", duration: 5 },
      },
    });
    await arrived((m) => m.id === call);
    const taskId = find((m) => m.id === call).result.taskId as string;
    expect(taskId).toEqual(expect.any(String));

    const listen = request("subscriptions/listen", { notifications: { taskIds: [taskId, "nope"] } });
    const ack = (m: Message) =>
      m.method === "notifications/subscriptions/acknowledged" && onListen(listen)(m);
    await arrived(ack);
    expect(find(ack).params.notifications).toEqual({ taskIds: [taskId] });
    const done = (m: Message) =>
      m.method === "notifications/tasks" && m.params?.taskId === taskId && m.params?.status === "completed";
    await arrived(done);
    const notes = messages.filter((m) => m.method === "notifications/tasks");
    expect(notes.every(onListen(listen))).toBe(true);
    expect(messages.indexOf(find(ack))).toBeLessThan(messages.indexOf(notes[0] as Message));
    const result = find(done).params.result;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    // Nothing more to follow: the listen's graceful close.
    await arrived((m) => m.id === listen && m.result !== undefined);
    expect(find((m) => m.id === listen).result).toMatchObject({ resultType: "complete" });
  }, 60_000);

  it("refuses a listen naming tasks without the extension, and sends nothing on it", async () => {
    const listen = request("subscriptions/listen", { notifications: { taskIds: ["x"] } }, envelope());
    await arrived((m) => m.id === listen);
    expect(find((m) => m.id === listen).error?.code).toBe(-32021);
    await new Promise((r) => setTimeout(r, 300));
    expect(messages.filter(onListen(listen))).toHaveLength(1);
  });
});
