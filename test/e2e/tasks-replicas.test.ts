/**
 * MCP tasks shared by replicas: the built CLI three times on one PostgreSQL ledger behind HAProxy
 * (docs/deploying.md), against the sandbox through a recording receiver. A task created through
 * one replica is read through the others and through the balancer, with one result and one
 * dispatch; a replica killed while its task's send was held leaves the task to another, which
 * replays the same identity with the same bytes once the lease lapses.
 */
import { describe, expect, it } from "vitest";
import { startHttpCli } from "../helpers/cli.js";
import { callTool, pollTask, rpc, textOf } from "../helpers/tasks-wire.js";
import { deploymentForTests } from "./replica-tests.js";

const VIDEO = "POST /api/generate/video";
const deployment = deploymentForTests("the MCP task replica tests (test/e2e/tasks-replicas.test.ts)");

const clip = (prompt: string) => ({
  model: "sandbox-video-lite",
  prompt,
  parameters: { mode: "text-to-video", duration: 5 },
});

describe.runIf(deployment.ready)("MCP tasks on three replicas behind HAProxy, one PostgreSQL ledger", () => {
  it("a task created through one replica is read through every other, and through the balancer", async (ctx) => {
    const running = deployment.current();
    if (running === undefined) return ctx.skip();
    const { d, key } = running;
    const [one, two, three] = d.replicas.map((r) => r.url);
    if (one === undefined || two === undefined || three === undefined) throw new Error("three replicas");
    const before = d.sandbox.stats.dispatches(VIDEO);
    const created = await callTool(one, "generate_video", clip("a harbour at night"), { tasks: true, key });
    const { taskId } = created.result;
    expect(created.result.resultType).toBe("task");
    // Durable before the answer, in the shared store: another replica finds it at once.
    const elsewhere = await rpc(two, "tasks/get", { taskId }, { tasks: true, key });
    expect(elsewhere.result.taskId).toBe(taskId);
    const { final } = await pollTask(three, taskId, { key, timeoutMs: 30_000 });
    expect(final.result.status).toBe("completed");
    expect(final.result.result.isError ?? false, textOf(final.result.result)).toBe(false);
    // Every way in reads the same task and the same result.
    for (let i = 0; i < 3; i++) {
      const through = await rpc(
        d.balancer.url,
        "tasks/get",
        { taskId },
        { tasks: true, key, fetch: d.balancer.fetch },
      );
      expect(through.result).toEqual(final.result);
    }
    // Only this key's: another key's request through any replica finds nothing.
    const other = d.sandbox.addKey({ scopes: ["read", "generate"] });
    expect((await rpc(two, "tasks/get", { taskId }, { tasks: true, key: other })).error?.code).toBe(-32602);
    expect(d.sandbox.stats.dispatches(VIDEO)).toBe(before + 1);
  }, 60_000);

  it("a replica killed while its task's send is held: another takes the task over under the same identity", async (ctx) => {
    const running = deployment.current();
    if (running === undefined) return ctx.skip();
    const { d, key } = running;
    const survivor = d.replicas[1]?.url ?? "";
    const victim = await startHttpCli([], d.replicaEnv());
    const before = d.sandbox.stats.dispatches(VIDEO);
    const received = d.receiver.requests.length;
    const release = d.receiver.hold();
    let taskId: string;
    try {
      const created = await callTool(victim.url, "generate_video", clip("a harbour, killed"), {
        tasks: true,
        key,
      });
      taskId = created.result.taskId;
      await d.receiver.waitForRequests(received + 1);
      victim.child.kill("SIGKILL");
      await new Promise((r) => victim.child.once("exit", r));
    } finally {
      release();
    }
    const { final } = await pollTask(survivor, taskId, { key, timeoutMs: 45_000 });
    expect(final.result.status).toBe("completed");
    const result = final.result.result;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    const sent = d.receiver.requests.slice(received);
    // The dead replica's request, then the survivor's replay: one identity, the same bytes.
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(new Set(sent.map((r) => r.identity)).size).toBe(1);
    expect(new Set(sent.map((r) => r.body)).size).toBe(1);
    expect(result.structuredContent.idempotencyKey).toBe(sent[0]?.identity);
    expect(d.sandbox.stats.dispatches(VIDEO)).toBe(before + 1);
  }, 90_000);
});
