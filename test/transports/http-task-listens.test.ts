/**
 * The SDK's listen stream wrapped for tasks (src/transports/http-task-listens.ts), over a stream
 * shaped as the SDK writes it and a feed the test drives: the acknowledgement gains the agreed
 * IDs and comes first, the tasks follow it, the SDK's immediate close is held until every task
 * ended; a client that leaves stops the following; a listen naming no task passes untouched.
 */
import { describe, expect, it } from "vitest";
import type { TaskWatchHooks } from "../../src/mcp/mcp-task-wire-listen.js";
import { withTaskListen } from "../../src/transports/http-task-listens.js";

const META = {
  "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
};
const body = (notifications: object) => ({
  jsonrpc: "2.0",
  id: 9,
  method: "subscriptions/listen",
  params: { notifications, _meta: META },
});
const sse = (m: object) => `event: message\ndata: ${JSON.stringify(m)}\n\n`;
const ACK = {
  jsonrpc: "2.0",
  method: "notifications/subscriptions/acknowledged",
  params: { notifications: {}, _meta: { "io.modelcontextprotocol/subscriptionId": 9 } },
};
const CLOSE = { jsonrpc: "2.0", id: 9, result: { resultType: "complete" } };

/** The SDK's answer to a listen it honours nothing else of: the acknowledgement, then its close. */
const sdkAnswer = () =>
  new Response(new Blob([sse(ACK), sse(CLOSE)]).stream(), {
    headers: { "content-type": "text/event-stream" },
  });

function feed() {
  const state = { hooks: undefined as TaskWatchHooks | undefined, started: false, closed: false };
  const open = async (taskIds: string[], hooks: TaskWatchHooks) => {
    state.hooks = hooks;
    return {
      taskIds: taskIds.filter((id) => id !== "foreign"),
      start: () => {
        state.started = true;
      },
      close: () => {
        state.closed = true;
      },
    };
  };
  return { state, open };
}

async function frames(reader: ReadableStreamDefaultReader<Uint8Array>, count: number): Promise<object[]> {
  const out: object[] = [];
  const decoder = new TextDecoder();
  let text = "";
  while (out.length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value);
    for (let at = text.indexOf("\n\n"); at !== -1; at = text.indexOf("\n\n")) {
      const data = text
        .slice(0, at)
        .split("\n")
        .find((l) => l.startsWith("data:"));
      text = text.slice(at + 2);
      if (data !== undefined) out.push(JSON.parse(data.slice(5)));
    }
  }
  return out;
}

const task = (status: string) =>
  ({ taskId: "t", status, createdAt: "x", lastUpdatedAt: "x", ttlMs: 1 }) as never;

describe("a listen naming tasks over HTTP", () => {
  it("acknowledges the agreed IDs first, then the tasks, and holds the close until they ended", async () => {
    const f = feed();
    const response = await withTaskListen(sdkAnswer(), body({ taskIds: ["t", "foreign"] }), f.open);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const [ack] = await frames(reader, 1);
    expect(ack).toMatchObject({ params: { notifications: { taskIds: ["t"] } } });
    await expect.poll(() => f.state.started).toBe(true);
    f.state.hooks?.onTask(task("working"));
    f.state.hooks?.onTask(task("completed"));
    const pushed = await frames(reader, 2);
    expect(pushed.map((m) => (m as { params: { status: string } }).params.status)).toEqual([
      "working",
      "completed",
    ]);
    f.state.hooks?.onSettled();
    expect(await frames(reader, 1)).toEqual([CLOSE]);
    expect((await reader.read()).done).toBe(true);
  });

  it("stops following when the client leaves", async () => {
    const f = feed();
    const response = await withTaskListen(sdkAnswer(), body({ taskIds: ["t"] }), f.open);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await frames(reader, 1);
    await reader.cancel();
    expect(f.state.closed).toBe(true);
  });

  it("passes a listen naming no task through, and refuses one without the extension", async () => {
    const plain = sdkAnswer();
    expect(await withTaskListen(plain, body({ toolsListChanged: true }), feed().open)).toBe(plain);
    const undeclared = { ...body({ taskIds: ["t"] }), params: { notifications: { taskIds: ["t"] } } };
    const refused = await withTaskListen(sdkAnswer(), undeclared, feed().open);
    expect(await refused.json()).toMatchObject({ id: 9, error: { code: -32021 } });
  });
});
