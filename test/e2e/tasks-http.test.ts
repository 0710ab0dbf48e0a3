/**
 * MCP Tasks (the 2026-07-28 extension io.modelcontextprotocol/tasks) through the built CLI over
 * loopback HTTP, in raw JSON-RPC as Claude Code sends it, against the sandbox service in this
 * process (its dispatch counts and faults): discovery, the -32021 gate, opt-in per request, the
 * CreateTaskResult's shape, tasks/get from working to completed with the tool's own result,
 * delivery by the ledger's rules, a failed generation and a refusal as completed + isError,
 * cancel and what it says about money, another key's tasks out of reach, spending confirmed
 * before any task exists, and a video analysis as a task.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { renderVideo } from "../../src/sandbox/media/mp4.js";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { type TasksServer, tasksServer } from "../helpers/tasks-server.js";
import { callTool, pollTask, rpc, TASKS_EXTENSION, textOf } from "../helpers/tasks-wire.js";

const IMAGE = "POST /api/generate/image";
const VIDEO = "POST /api/generate/video";
const OTHER_KEY = `lgk_${"e".repeat(64)}`;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const image = (prompt: string, extra: Record<string, unknown> = {}) => ({
  model: "sandbox-image-fast",
  prompt,
  ...extra,
});
const video = (prompt: string) => ({
  model: "sandbox-video-lite",
  prompt,
  parameters: { mode: "text-to-video", duration: 5 },
  // Video has no estimate, and this client cannot ask: the confirmation threshold (50) is sent as
  // maxGems, above this video's quote.
});

const server = tasksServer();
let service: TasksServer["service"];
let url: string;

beforeAll(() => {
  ({ service } = server);
  url = server.cli.url;
});

/** The record of one identity, as list_requests shows it (a synchronous call). */
async function record(identity: string): Promise<{ delivered: boolean; state: string } | undefined> {
  const r = await callTool(url, "list_requests", { idempotencyKey: identity });
  return r.result.structuredContent.requests[0];
}

describe("MCP Tasks on the 2026-07-28 wire, through the built CLI", () => {
  it("advertises the extension under capabilities.extensions, and gates tasks/* on it per request", async () => {
    const discover = await rpc(url, "server/discover", {});
    expect(discover.result.capabilities.extensions[TASKS_EXTENSION]).toEqual({});
    expect(discover.result.capabilities).not.toHaveProperty("tasks");
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const params = method === "tasks/update" ? { taskId: "t-1", inputResponses: {} } : { taskId: "t-1" };
      const refused = await rpc(url, method, params);
      expect(refused.error?.code, method).toBe(-32021);
      expect(refused.error?.data).toEqual({
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
    // The 2025-11-25 methods are gone from this form (SEP-2663).
    for (const method of ["tasks/result", "tasks/list"]) {
      expect((await rpc(url, method, { taskId: "t-1" }, { tasks: true })).error?.code, method).toBe(-32601);
    }
  });

  it("answers a call that declares it with a task at once, then tasks/get from working to completed with the tool's own result", async () => {
    const before = service.sandbox.stats.dispatches(IMAGE);
    const created = await callTool(url, "generate_image", image("a heron in the reeds"), { tasks: true });
    const task = created.result;
    expect(task).toMatchObject({ resultType: "task", status: "working" });
    expect(task.taskId).toMatch(/^[0-9a-f-]{36}$/);
    expect(task.createdAt).toMatch(ISO);
    expect(task.lastUpdatedAt).toMatch(ISO);
    expect(Number.isInteger(task.ttlMs) && task.ttlMs > 0).toBe(true);
    expect(Number.isInteger(task.pollIntervalMs) && task.pollIntervalMs > 0).toBe(true);
    for (const absent of ["task", "result", "error", "structuredContent", "ttl", "pollInterval"])
      expect(task, absent).not.toHaveProperty(absent);
    // Durable before the answer: a tasks/get at once finds it.
    const first = await rpc(url, "tasks/get", { taskId: task.taskId }, { tasks: true });
    expect(first.result).toMatchObject({ taskId: task.taskId, resultType: "complete" });

    const { final, seen } = await pollTask(url, task.taskId);
    const working = seen.filter((s) => s.result?.status === "working");
    expect(working.length).toBeGreaterThan(0);
    // While it works, the status is the service's, in the results' own words.
    expect(working.map((w) => w.result.statusMessage).join("\n")).toMatch(/Task task_\w+ (is|has)/);
    expect(final.result.status).toBe("completed");
    const result = final.result.result;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    const s = result.structuredContent as { idempotencyKey: string; created: boolean; task: { id: string } };
    expect(s).toMatchObject({ created: true, task: { status: "succeeded" } });
    // Self-contained: what was done, its outputs with links and asset IDs, the Gems, the IDs to keep.
    const text = textOf(result);
    expect(text).toContain(`Task ${s.task.id} has succeeded`);
    expect(text).toContain(`Identity (idempotencyKey): ${s.idempotencyKey}`);
    expect(text).toMatch(/Gems: quoted \d+, charged \d+/);
    expect(text).toMatch(/- #0 succeeded image\/\w+, asset ID \S+ \(use it as sourceImage[^)]*\): http/);
    expect(result.content).toContainEqual(
      expect.objectContaining({ type: "resource_link", uri: `generation://tasks/${s.task.id}/outputs/0` }),
    );
    expect(result._meta?.["io.modelcontextprotocol/related-task"]).toBeUndefined();
    expect(service.sandbox.stats.dispatches(IMAGE)).toBe(before + 1);
    expect(JSON.stringify(seen)).not.toContain(SANDBOX_API_KEY.slice(4));
    // The result reached the client in that tasks/get: the ledger marks it delivered.
    await expect.poll(() => record(s.idempotencyKey), { timeout: 3_000 }).toMatchObject({ delivered: true });

    // The same call from a client that does not declare the extension: today's synchronous answer.
    const sync = await callTool(url, "generate_image", image("a heron in the reeds", { wait: 10 }));
    expect(sync.result.resultType).toBe("complete");
    expect(sync.result).not.toHaveProperty("taskId");
    expect(Object.keys(sync.result.structuredContent).sort()).toEqual(Object.keys(s).sort());
    // Delivered, so the same arguments were new work: a new identity, a second dispatch.
    expect(sync.result.structuredContent.idempotencyKey).not.toBe(s.idempotencyKey);
  });

  it("replays the identity of a task whose result has not reached the client yet, as the ledger says", async () => {
    const before = service.sandbox.stats.dispatches(IMAGE);
    const args = image("an egret at dawn");
    const created = await callTool(url, "generate_image", args, { tasks: true });
    const again = await callTool(url, "generate_image", { ...args, wait: 0 });
    expect(again.result.structuredContent.created).toBe(false);
    const { final } = await pollTask(url, created.result.taskId);
    expect(final.result.result.structuredContent.idempotencyKey).toBe(
      again.result.structuredContent.idempotencyKey,
    );
    expect(service.sandbox.stats.dispatches(IMAGE)).toBe(before + 1);
  });

  it("completes a failed generation, and a refusal after the claim, with isError (not `failed`)", async () => {
    // The send happens after the task is handed back: the fault is the next image request's.
    // One that quotes the request's own key, as a careless service might: no answer carries it.
    service.sandbox.faults.inject(IMAGE, { status: 409, code: "REQUEST_FAILED", echoKey: true });
    const refused = await callTool(url, "generate_image", image("a refused gull"), { tasks: true });
    const refusal = await pollTask(url, refused.result.taskId);
    const failing = await callTool(url, "generate_image", image("[sandbox:fail] a storm"), { tasks: true });
    const failed = await pollTask(url, failing.result.taskId);
    expect(failed.final.result.status).toBe("completed");
    expect(failed.final.result.result.isError).toBe(true);
    expect(textOf(failed.final.result.result)).toMatch(/has failed \(terminal\)[\s\S]*GENERATION_FAILED/);
    expect(refusal.final.result.status).toBe("completed");
    expect(refusal.final.result.result.isError).toBe(true);
    const text = textOf(refusal.final.result.result);
    expect(text).toMatch(/^REQUEST_FAILED: /);
    expect(text).toMatch(/Identity \(idempotencyKey\): gm-\S+, now closed/);
    const seen = JSON.stringify(refusal.seen).toLowerCase();
    expect(seen).not.toContain(SANDBOX_API_KEY.slice(4, 20));
    expect(JSON.stringify(refusal.seen)).not.toContain(
      Buffer.from(SANDBOX_API_KEY).toString("base64").slice(4, 40),
    );
  });

  it("cancel stops the waiting and says the truth about the money; the work stays reachable", async () => {
    const before = service.sandbox.stats.dispatches(VIDEO);
    const created = await callTool(url, "generate_video", video("a slow tide"), { tasks: true });
    const ack = await rpc(url, "tasks/cancel", { taskId: created.result.taskId }, { tasks: true });
    expect(ack.result.resultType).toBe("complete");
    for (const field of ["taskId", "status", "result", "error", "inputRequests"])
      expect(ack.result).not.toHaveProperty(field);
    // The send in flight finishes, so the cancelled task names the service's task that goes on.
    const named = async () =>
      (await rpc(url, "tasks/get", { taskId: created.result.taskId }, { tasks: true })).result;
    await expect
      .poll(named, { timeout: 5_000 })
      .toMatchObject({ statusMessage: expect.stringContaining("task_") });
    const cancelled = await named();
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.statusMessage).toMatch(/no cancellation: task (task_\w+) \(identity gm-\S+\) was sent/);
    expect(cancelled.statusMessage).toContain("charged");
    expect(cancelled.statusMessage).toContain("poll_task");
    const serviceTask = /task (task_\w+)/.exec(cancelled.statusMessage)?.[1] ?? "";
    const polled = await callTool(url, "poll_task", { taskId: serviceTask, wait: 0 });
    expect(polled.result.isError ?? false).toBe(false);
    expect(polled.result.structuredContent.task.id).toBe(serviceTask);
    expect(service.sandbox.stats.dispatches(VIDEO)).toBe(before + 1);
    // A cancel of a finished task changes nothing.
    const done = await callTool(url, "generate_image", image("a finished kite"), { tasks: true });
    const { final } = await pollTask(url, done.result.taskId);
    await rpc(url, "tasks/cancel", { taskId: done.result.taskId }, { tasks: true });
    const after = await rpc(url, "tasks/get", { taskId: done.result.taskId }, { tasks: true });
    expect(after.result.status).toBe("completed");
    expect(after.result.result).toEqual(final.result.result);
  });

  it("keeps a key's tasks from every other key: found nowhere, told apart from nothing", async () => {
    const created = await callTool(url, "generate_image", image("a private lantern"), { tasks: true });
    const { taskId } = created.result;
    const foreign = await rpc(url, "tasks/get", { taskId }, { tasks: true, key: OTHER_KEY });
    const unknown = await rpc(
      url,
      "tasks/get",
      { taskId: "00000000-0000-4000-8000-000000000000" },
      { tasks: true },
    );
    expect(foreign.error?.code).toBe(-32602);
    expect(foreign.error).toEqual(unknown.error);
    expect(foreign.status).toBe(unknown.status);
    // Another key's cancel is acknowledged (as for any ID) and changes nothing: the work goes on
    // here, and finishes long before a stopped one would be taken over (its lease lapses at 15 s).
    const ack = await rpc(url, "tasks/cancel", { taskId }, { tasks: true, key: OTHER_KEY });
    expect(ack.result?.resultType).toBe("complete");
    const { final } = await pollTask(url, taskId, { timeoutMs: 12_000 });
    expect(final.result.status).toBe("completed");
  });

  it("asks to confirm spending before any task exists, and records nothing until answered", async () => {
    const asked = await callTool(
      url,
      "generate_image",
      image("four costly cranes", {
        model: "sandbox-image-pro",
        parameters: { resolution: "4K", outputCount: 4 },
      }),
      {
        tasks: true,
        capabilities: { elicitation: { form: {} } },
      },
    );
    expect(asked.result.resultType).toBe("input_required");
    expect(asked.result).not.toHaveProperty("taskId");
    const listed = await callTool(url, "list_requests", {});
    const prompts = JSON.stringify(listed.result.structuredContent.requests);
    expect(prompts).not.toContain("four costly cranes");
  });

  it("runs a video analysis as a task too", async () => {
    const mp4 = renderVideo("a silent clip", 4, "16:9", { audio: false });
    const upload = await callTool(url, "upload_asset", {
      data: mp4.toString("base64"),
      mimeType: "video/mp4",
    });
    const assetId = upload.result.structuredContent.asset.id;
    // An upload is `processing` for a second of sandbox time before it can be analysed.
    await new Promise((r) => setTimeout(r, 1_500));
    // At the confirmation threshold (50 here): above it, a host that cannot ask gets a quote.
    const args = { videoAssetId: assetId, prompt: "what moves?", maxGems: 50 };
    const created = await callTool(url, "extract_video", args, { tasks: true });
    expect(created.result.resultType).toBe("task");
    const { final } = await pollTask(url, created.result.taskId);
    expect(final.result.status).toBe("completed");
    const result = final.result.result;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    expect(result.structuredContent).toMatchObject({ extraction: { durationSeconds: 4 } });
    expect(textOf(result)).toMatch(/^Extraction \S+ of a video of 4 s \(identity gm-/);
  });
});
