/**
 * generate_batch as users run it: the built CLI (dist/cli.js) over stdio against a sandbox on
 * loopback (its dispatches counted), and as one MCP task on the 2026-07-28 wire.
 * - A batch answers every item's identity and task; the same batch again (its idempotencyKey)
 *   dispatches nothing new and answers the same tasks.
 * - A partly failed batch is no error, says what was charged and which items to retry.
 * - Where the client declares MCP Tasks, the batch is one task whose result is the whole answer;
 *   stopped while waiting, the next process on the same ledger replays it and dispatches nothing.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runSandboxServer, SANDBOX_API_KEY, type Sandbox } from "../../src/sandbox/sandbox.js";
import { CLI, connectCli, initializeRequest, isolatedEnv, startHttpCli } from "../helpers/cli.js";
import { type LoopbackSandbox, loopbackSandbox } from "../helpers/loopback-sandbox.js";
import { callTool, envelope, pollTask, rpc, textOf as wireText } from "../helpers/tasks-wire.js";

const IMAGE = "POST /api/generate/image";
const VIDEO = "POST /api/generate/video";

type Result = Awaited<ReturnType<Client["callTool"]>>;
type Batch = {
  idempotencyKey: string;
  items: {
    identity: string;
    created?: boolean;
    task?: { id: string; status: string; chargedGems: number };
    error?: object;
  }[];
  gems: { charged: number };
  next: string;
};
const textOf = (r: Result): string =>
  (r.content as { type: string; text?: string }[]).find((c) => c.type === "text")?.text ?? "";

let loopback: LoopbackSandbox;
let sandbox: Sandbox;

beforeAll(async () => {
  loopback = await loopbackSandbox({ timeScale: 20 });
  sandbox = loopback.sandbox;
});
afterAll(() => loopback.stop());

const image = (prompt: string) => ({
  tool: "generate_image",
  arguments: { model: "sandbox-image-fast", prompt },
});

describe("generate_batch through the built CLI (stdio)", () => {
  it("answers every item; the same batch again dispatches nothing and answers the same tasks", async () => {
    const { client } = await connectCli({ args: [CLI], env: loopback.envOf("batch-replay") });
    try {
      const before = sandbox.stats.dispatches(IMAGE);
      const args = {
        items: [image("one"), image("two"), image("three")],
        idempotencyKey: "cli-batch",
        wait: 20,
      };
      const a = await client.callTool({ name: "generate_batch", arguments: args });
      expect(a.isError ?? false, textOf(a)).toBe(false);
      const s = a.structuredContent as Batch;
      expect(s.items.map((i) => i.identity)).toEqual(["cli-batch.0", "cli-batch.1", "cli-batch.2"]);
      expect(s.items.every((i) => i.task?.status === "succeeded")).toBe(true);
      expect(sandbox.stats.dispatches(IMAGE) - before).toBe(3);
      const b = await client.callTool({ name: "generate_batch", arguments: args });
      expect(sandbox.stats.dispatches(IMAGE) - before).toBe(3);
      expect((b.structuredContent as Batch).items.map((i) => i.task?.id)).toEqual(
        s.items.map((i) => i.task?.id),
      );
      expect(textOf(b)).toMatch(/replayed: every item continues under its own identity, not charged twice/);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("a partly failed batch is no error: it says what was charged and which items to retry", async () => {
    const { client } = await connectCli({ args: [CLI], env: loopback.envOf("batch-partial") });
    try {
      const r = await client.callTool({
        name: "generate_batch",
        arguments: { items: [image("fine"), image("broken [sandbox:fail]")], wait: 20 },
      });
      expect(r.isError ?? false, textOf(r)).toBe(false);
      const s = r.structuredContent as Batch;
      expect(s.items.map((i) => i.task?.status)).toEqual(["succeeded", "failed"]);
      expect(s.gems.charged).toBe(s.items.reduce((n, i) => n + (i.task?.chargedGems ?? 0), 0));
      expect(s.next).toMatch(/items \[1\] alone/);
    } finally {
      await client.close();
    }
  }, 60_000);
});

// biome-ignore lint/suspicious/noExplicitAny: raw wire answers are read field by field.
type Message = { id?: number; result?: Record<string, any>; error?: { code: number } };

/** The CLI on stdio with `--sandbox`, spoken to line by line: one request at a time answered by ID. */
function stdio(env: Record<string, string>) {
  const proc: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, "--sandbox"], {
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const waiting = new Map<number, (m: Message) => void>();
  let partial = "";
  proc.stdout.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      const m = JSON.parse(line) as Message;
      if (m.id !== undefined) waiting.get(m.id)?.(m);
    }
  });
  let id = 1;
  const write = (m: object) => proc.stdin.write(`${JSON.stringify(m)}\n`);
  return {
    write,
    request(method: string, params: Record<string, unknown>, meta?: Record<string, unknown>) {
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
    async close() {
      const exited = new Promise((r) => proc.once("exit", r));
      proc.stdin.end();
      await exited;
    },
  };
}

describe("generate_batch as one MCP task (stdio)", () => {
  const iso = isolatedEnv();
  let open: ReturnType<typeof stdio> | undefined;
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });
  afterAll(() => iso.cleanup());

  it("on 2026-07-28: one task for the batch; tasks/get ends with the whole answer, every record delivered", async () => {
    const s = stdio(iso.env);
    open = s;
    const tasks = envelope({ tasks: true });
    await s.request("server/discover", {}, envelope());
    const created = await s.request(
      "tools/call",
      { name: "generate_batch", arguments: { items: [image("a heron"), image("a crane")] } },
      tasks,
    );
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
    expect(result.isError ?? false, wireText(result)).toBe(false);
    const b = result.structuredContent as Batch;
    expect(b.items.map((i) => i.identity)).toEqual([0, 1].map((i) => `${b.idempotencyKey}.${i}`));
    expect(b.items.every((i) => i.task?.status === "succeeded")).toBe(true);
    // Its result read, the batch's record and every item's are delivered: nothing left open.
    await expect
      .poll(async () => {
        const listed = await s.request("tools/call", { name: "list_requests", arguments: {} }, envelope());
        const requests = listed.result?.structuredContent.requests as { delivered: boolean }[];
        return requests.map((r) => r.delivered);
      })
      .toEqual([true, true, true]);
  }, 60_000);

  it("on 2025-11-25, asked for with params.task: a task, then the batch's answer by tasks/result", async () => {
    const s = stdio(iso.env);
    open = s;
    await s.request("initialize", initializeRequest().params);
    s.write({ jsonrpc: "2.0", method: "notifications/initialized" });
    const created = await s.request("tools/call", {
      name: "generate_batch",
      arguments: { items: [image("a stork"), image("an ibis")] },
      task: {},
    });
    expect(created.result?.task).toMatchObject({ status: "working" });
    const taskId = created.result?.task.taskId as string;
    const result = (await s.request("tasks/result", { taskId })).result ?? {};
    const b = result.structuredContent as Batch;
    expect(
      b.items.every((i) => i.task?.status === "succeeded"),
      JSON.stringify(result).slice(0, 500),
    ).toBe(true);
  }, 60_000);
});

describe("generate_batch's task across a restart on the same ledger (HTTP)", () => {
  const iso = isolatedEnv();
  let service: Awaited<ReturnType<typeof runSandboxServer>> | undefined;
  afterAll(async () => {
    await service?.close();
    iso.cleanup();
  });

  it("stopped while waiting: the next process replays the batch and every item; nothing dispatched again", async () => {
    // Clips of 5 s at timeScale 2: still running when the first process stops.
    service = await runSandboxServer({ host: "127.0.0.1", port: 0, timeScale: 2 });
    const env = { ...iso.env, GENERATION_BASE_URL: service.url, GENERATION_API_KEY: SANDBOX_API_KEY };
    const clip = (prompt: string) => ({
      tool: "generate_video",
      arguments: { model: "sandbox-video-lite", prompt, parameters: { mode: "text-to-video", duration: 5 } },
    });
    const first = await startHttpCli([], env);
    const created = await callTool(
      first.url,
      "generate_batch",
      { items: [clip("a lighthouse"), clip("a harbour")] },
      { tasks: true },
    );
    const { taskId } = created.result;
    const status = async () =>
      (await rpc(first.url, "tasks/get", { taskId }, { tasks: true })).result.statusMessage ?? "";
    for (const end = Date.now() + 10_000; !/Sent 2 of 2 items/.test(await status()); ) {
      if (Date.now() > end) throw new Error("the batch's items were not sent in time");
      await new Promise((r) => setTimeout(r, 50));
    }
    const dispatched = service.sandbox.stats.dispatches(VIDEO);
    await first.stop();

    const second = await startHttpCli([], env);
    try {
      const { final } = await pollTask(second.url, taskId, { timeoutMs: 45_000 });
      expect(final.result.status).toBe("completed");
      const result = final.result.result;
      expect(result.isError ?? false, wireText(result)).toBe(false);
      const s = result.structuredContent as Batch;
      expect(s.items.map((i) => i.task?.status)).toEqual(["succeeded", "succeeded"]);
      // Replayed under the same identities: the service's tasks, not new ones.
      expect(s.items.map((i) => i.created)).toEqual([false, false]);
      expect(service.sandbox.stats.dispatches(VIDEO)).toBe(dispatched);
    } finally {
      await second.stop();
    }
  }, 90_000);
});
