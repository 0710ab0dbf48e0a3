/**
 * MCP tasks in flight per key (tasksPerKey, src/calls/mcp-task/mcp-task-background.ts): the slot is
 * claimed before handBack's first await, so a burst of parallel calls under one key starts exactly
 * its share; the others are refused before anything is sent, naming the limit, and another key is
 * still served.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { handBack } from "../../../src/calls/mcp-task/mcp-task-background.js";
import { mediaSteps } from "../../../src/calls/paid/media-call.js";
import type { Engine } from "../../../src/mcp/context.js";
import { LocalRefusal } from "../../../src/shared/local-refusals.js";
import { type Harness, harness } from "../../tools/harness.js";
import { finished, imageWork } from "./mcp-task-fixtures.js";

const IMAGE = "POST /api/generate/image";
let h: Harness;
beforeEach(async () => {
  h = await harness({ timeScale: 20 });
});
afterEach(async () => {
  await h.close();
});

/** The harness's engine under other limits (and, given one, another key hash). */
function limited(keyHash?: string): Engine {
  const config = { ...h.engine.config, serveLimits: { tasks: 5, tasksPerKey: 3 } };
  return Object.create(h.engine, {
    config: { value: config },
    ...(keyHash === undefined ? {} : { keyHash: { value: keyHash } }),
  }) as Engine;
}

describe("MCP tasks in flight per key", () => {
  it("a burst of 8 under one key starts 3; the rest are refused before any send", async () => {
    const engine = limited();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => handBack(engine, mediaSteps(engine, imageWork(`kite ${i}`)))),
    );
    const started = outcomes.filter((o) => o.status === "fulfilled");
    const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as unknown] : []));
    expect(started).toHaveLength(3);
    expect(refused).toHaveLength(5);
    for (const err of refused) {
      expect(err).toBeInstanceOf(LocalRefusal);
      expect((err as LocalRefusal).code).toBe("TOO_MANY_TASKS");
      expect((err as LocalRefusal).message).toMatch(/limit 3, tasksPerKey\); nothing was sent/);
      expect((err as LocalRefusal).action).toMatch(/retry after about \d+ s/);
    }
    expect(h.sandbox.stats.requests(IMAGE)).toBe(3);

    // Another key has its own share, within the total of 5.
    const other = limited("f".repeat(64));
    const theirs = await Promise.allSettled(
      Array.from({ length: 3 }, (_, i) => handBack(other, mediaSteps(other, imageWork(`other ${i}`)))),
    );
    expect(theirs.filter((o) => o.status === "fulfilled")).toHaveLength(2);
    expect((theirs.find((o) => o.status === "rejected") as PromiseRejectedResult).reason.message).toMatch(
      /limit 5, tasks\)/,
    );

    // Once the tasks end, their slots are back.
    for (const o of started) await finished(engine, (o.value as unknown as { taskId: string }).taskId);
    const again = (await handBack(engine, mediaSteps(engine, imageWork("kite again")))) as unknown as {
      taskId: string;
    };
    await finished(engine, again.taskId);
  });

  it("counts the key's tasks on other replicas: two held elsewhere leave one here", async () => {
    const engine = limited();
    // Another replica on this store drives two of this key's tasks (its entry, as it writes it).
    const kv = await engine.ledger.keyed();
    const elsewhere = JSON.stringify({ "other-replica": { n: 2, exp: Date.now() + 60_000 } });
    await kv.put(`pool:tasks:${engine.keyHash}`, elsewhere, 60_000);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 4 }, (_, i) => handBack(engine, mediaSteps(engine, imageWork(`shared ${i}`)))),
    );
    const started = outcomes.filter((o) => o.status === "fulfilled");
    expect(started).toHaveLength(1);
    const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as LocalRefusal] : []));
    expect(refused.map((e) => e.code)).toEqual(["TOO_MANY_TASKS", "TOO_MANY_TASKS", "TOO_MANY_TASKS"]);
    expect(
      refused.some((e) => /for this key on all replicas together \(limit 3, tasksPerKey\)/.test(e.message)),
    ).toBe(true);
    expect(h.sandbox.stats.requests(IMAGE)).toBe(1);
    for (const o of started) await finished(engine, (o.value as unknown as { taskId: string }).taskId);
  });
});
