/**
 * MCP Tasks over stdio, as Claude Code runs a local server: the built CLI spoken to line by line
 * on the 2026-07-28 wire (server/discover first, the extension declared per request): a task at
 * once, tasks/get until completed, and the result delivered once its stdout write completed.
 * A 2025-11-25 session (initialize) gets today's synchronous answers for requests without
 * `params.task`, whatever their `_meta` says, and a task in that revision's form for one with it.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, initializeRequest, isolatedEnv } from "../helpers/cli.js";
import { envelope, TASKS_EXTENSION, textOf } from "../helpers/tasks-wire.js";

// biome-ignore lint/suspicious/noExplicitAny: raw wire answers are read field by field.
type Wire = Record<string, any>;
type Message = { id?: number; method?: string; params?: Wire; result?: Wire; error?: { code: number } };

/** The CLI on stdio with `--sandbox`, and one request at a time answered by ID. */
function stdio() {
  const iso = isolatedEnv();
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, "--sandbox"], {
    env: iso.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const waiting = new Map<number, (m: Message) => void>();
  const notifications: Message[] = [];
  let partial = "";
  child.stdout.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      const m = JSON.parse(line) as Message;
      if (m.id !== undefined) waiting.get(m.id)?.(m);
      else notifications.push(m);
    }
  });
  let id = 100;
  const write = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
  return {
    write,
    notifications,
    request(
      method: string,
      params: Record<string, unknown>,
      meta?: Record<string, unknown>,
    ): Promise<Message> {
      const n = id++;
      const answer = new Promise<Message>((resolve) => waiting.set(n, resolve));
      write({
        jsonrpc: "2.0",
        id: n,
        method,
        params: meta === undefined ? params : { ...params, _meta: meta },
      });
      return answer;
    },
    close: async () => {
      const exited = new Promise((r) => child.once("exit", r));
      child.stdin.end();
      await exited;
      iso.cleanup();
    },
  };
}

let open: ReturnType<typeof stdio> | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

const heron = { model: "sandbox-image-fast", prompt: "a heron, over stdio" };

describe("MCP Tasks over stdio", () => {
  it("on 2026-07-28: server/discover, a task at once, tasks/get until completed, delivered", async () => {
    const s = stdio();
    open = s;
    const tasks = envelope({ tasks: true });
    const discover = await s.request("server/discover", {}, envelope());
    expect(discover.result?.capabilities.extensions[TASKS_EXTENSION]).toEqual({});
    const gated = await s.request("tasks/get", { taskId: "t" }, envelope());
    expect(gated.error?.code).toBe(-32021);

    const created = await s.request("tools/call", { name: "generate_image", arguments: heron }, tasks);
    expect(created.result).toMatchObject({ resultType: "task", status: "working" });
    const taskId = created.result?.taskId as string;
    let got: Message;
    for (;;) {
      got = await s.request("tasks/get", { taskId }, tasks);
      if (got.result?.status !== "working") break;
      await new Promise((r) => setTimeout(r, got.result?.pollIntervalMs));
    }
    expect(got.result?.status).toBe("completed");
    const result = got.result?.result;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    const identity = result.structuredContent.idempotencyKey as string;
    // Written to stdout, the result counts as delivered: the ledger says so.
    await expect
      .poll(async () => {
        const listed = await s.request(
          "tools/call",
          { name: "list_requests", arguments: { idempotencyKey: identity } },
          envelope(),
        );
        return listed.result?.structuredContent.requests[0]?.delivered;
      })
      .toBe(true);
  }, 60_000);

  it("on 2025-11-25 (initialize): a synchronous answer without params.task, a task with it", async () => {
    const s = stdio();
    open = s;
    const init = new Promise<void>((resolve) => {
      void s.request("initialize", initializeRequest().params).then(() => resolve());
    });
    await init;
    s.write({ jsonrpc: "2.0", method: "notifications/initialized" });
    const answer = await s.request(
      "tools/call",
      { name: "generate_image", arguments: { ...heron, wait: 10 } },
      envelope({ tasks: true }),
    );
    expect(answer.result).not.toHaveProperty("taskId");
    expect(answer.result?.structuredContent.task.status).toBe("succeeded");
    // This revision has tasks in its own form (tasks-2025.test.ts): an unknown task is not found.
    expect((await s.request("tasks/get", { taskId: "t" })).error?.code).toBe(-32602);

    // Asked for with params.task, as VS Code asks: a task, then its result by tasks/result, delivered.
    const created = await s.request("tools/call", { name: "generate_image", arguments: heron, task: {} });
    expect(created.result?.task).toMatchObject({ status: "working" });
    const taskId = created.result?.task.taskId as string;
    const result = (await s.request("tasks/result", { taskId })).result ?? {};
    expect(result._meta["io.modelcontextprotocol/related-task"]).toEqual({ taskId });
    expect(result.structuredContent.task.status).toBe("succeeded");
    // The task's one change of status, told outside any request, as this revision lets a server.
    await expect
      .poll(() => s.notifications.find((m) => m.method === "notifications/tasks/status")?.params)
      .toMatchObject({ taskId, status: "completed" });
    const identity = result.structuredContent.idempotencyKey as string;
    await expect
      .poll(async () => {
        const listed = await s.request("tools/call", {
          name: "list_requests",
          arguments: { idempotencyKey: identity },
        });
        return listed.result?.structuredContent.requests[0]?.delivered;
      })
      .toBe(true);
  }, 60_000);
});
