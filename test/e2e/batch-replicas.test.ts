/**
 * generate_batch on replicas: the built CLI three times on one PostgreSQL ledger behind HAProxy
 * (docs/deploying.md), against the sandbox through a recording receiver. A batch sent through one
 * replica and replayed through another (its idempotencyKey) dispatches nothing again and answers
 * the same items (identities and tasks); a batch run as one MCP task on one replica is read to its
 * end through another, and the same batch sent through a third replays it; a replica killed while
 * its batch's item sends were held leaves the task to another, which sends each item again under
 * the same identity with the same bytes, and the service dispatches each once.
 */
import { describe, expect, it } from "vitest";
import { startHttpCli } from "../helpers/cli.js";
import { callTool, pollTask, textOf } from "../helpers/tasks-wire.js";
import { deploymentForTests } from "./replica-tests.js";

const IMAGE = "POST /api/generate/image";
const deployment = deploymentForTests("the generate_batch replica tests (test/e2e/batch-replicas.test.ts)");

type Batch = {
  idempotencyKey: string;
  items: Array<{ identity: string; created?: boolean; task?: { id: string; status: string } }>;
};
const image = (prompt: string) => ({
  tool: "generate_image",
  arguments: { model: "sandbox-image-fast", prompt },
});
const itemsOf = (b: Batch) => b.items.map((i) => ({ identity: i.identity, task: i.task?.id }));

describe.runIf(deployment.ready)("generate_batch on three replicas, one PostgreSQL ledger", () => {
  it("a batch sent through one replica and replayed through another dispatches nothing again and answers the same items", async (ctx) => {
    const running = deployment.current();
    if (running === undefined) return ctx.skip();
    const { d, key } = running;
    const [one, two] = d.replicas.map((r) => r.url);
    if (one === undefined || two === undefined) throw new Error("two replicas");
    const before = d.sandbox.stats.dispatches(IMAGE);
    const args = {
      items: [image("a lighthouse"), image("a gull"), image("a buoy")],
      idempotencyKey: "replica-batch",
      wait: 20,
    };
    const first = await callTool(one, "generate_batch", args, { key });
    expect(first.result.isError ?? false, textOf(first.result)).toBe(false);
    const a = first.result.structuredContent as Batch;
    expect(a.items.map((i) => i.identity)).toEqual(["replica-batch.0", "replica-batch.1", "replica-batch.2"]);
    expect(a.items.every((i) => i.task?.status === "succeeded")).toBe(true);
    expect(d.sandbox.stats.dispatches(IMAGE)).toBe(before + 3);

    const again = await callTool(two, "generate_batch", args, { key });
    expect(again.result.isError ?? false, textOf(again.result)).toBe(false);
    const b = again.result.structuredContent as Batch;
    expect(itemsOf(b)).toEqual(itemsOf(a));
    expect(b.items.map((i) => i.created)).toEqual([false, false, false]);
    expect(textOf(again.result)).toMatch(/replayed: every item continues under its own identity/);
    expect(d.sandbox.stats.dispatches(IMAGE)).toBe(before + 3);
  }, 90_000);

  it("a batch as one MCP task on one replica is read through another, and sent through a third it replays", async (ctx) => {
    const running = deployment.current();
    if (running === undefined) return ctx.skip();
    const { d, key } = running;
    const [one, two, three] = d.replicas.map((r) => r.url);
    if (one === undefined || two === undefined || three === undefined) throw new Error("three replicas");
    const before = d.sandbox.stats.dispatches(IMAGE);
    const args = {
      items: [image("a tasked pier"), image("a tasked tern")],
      idempotencyKey: "replica-task-batch",
    };
    const created = await callTool(one, "generate_batch", args, { tasks: true, key });
    expect(created.result.resultType).toBe("task");
    const { final } = await pollTask(two, created.result.taskId, { key, timeoutMs: 45_000 });
    expect(final.result.status).toBe("completed");
    const result = final.result.result;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    const tasked = result.structuredContent as Batch;
    expect(tasked.items.map((i) => i.identity)).toEqual(["replica-task-batch.0", "replica-task-batch.1"]);
    expect(d.sandbox.stats.dispatches(IMAGE)).toBe(before + 2);

    const replayed = await callTool(three, "generate_batch", { ...args, wait: 20 }, { key });
    const r = replayed.result.structuredContent as Batch;
    expect(itemsOf(r)).toEqual(itemsOf(tasked));
    expect(d.sandbox.stats.dispatches(IMAGE)).toBe(before + 2);
  }, 90_000);

  it("a replica killed while its batch's items are held: another takes the task over, each item once", async (ctx) => {
    const running = deployment.current();
    if (running === undefined) return ctx.skip();
    const { d, key } = running;
    const survivor = d.replicas[1]?.url ?? "";
    const victim = await startHttpCli([], d.replicaEnv());
    const before = d.sandbox.stats.dispatches(IMAGE);
    const received = d.receiver.requests.length;
    const release = d.receiver.hold();
    let taskId: string;
    try {
      const args = { items: [image("a killed quay"), image("a killed skiff")] };
      const created = await callTool(victim.url, "generate_batch", args, { tasks: true, key });
      taskId = created.result.taskId;
      // Both items reached the service's door before the replica died.
      await d.receiver.waitForRequests(received + 2);
      victim.child.kill("SIGKILL");
      await new Promise((r) => victim.child.once("exit", r));
    } finally {
      release();
    }
    const { final } = await pollTask(survivor, taskId, { key, timeoutMs: 60_000 });
    expect(final.result.status).toBe("completed");
    const result = final.result.result;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    const batch = result.structuredContent as Batch;
    expect(batch.items.every((i) => i.task?.status === "succeeded")).toBe(true);
    // Each item's identity was sent with the same bytes each time, and dispatched once.
    const sent = d.receiver.requests.slice(received);
    const identities = batch.items.map((i) => i.identity);
    expect(new Set(sent.map((r) => r.identity))).toEqual(new Set(identities));
    for (const id of identities) {
      expect(new Set(sent.filter((r) => r.identity === id).map((r) => r.body)).size, id).toBe(1);
    }
    expect(d.sandbox.stats.dispatches(IMAGE)).toBe(before + 2);
  }, 120_000);
});
