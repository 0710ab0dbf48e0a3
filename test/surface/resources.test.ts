/**
 * Resource reads of things that do not exist answer the protocol's resource-not-found error (the
 * SDK's ResourceNotFoundError: -32602 with the URI in `data`) with a message that says what to
 * do, not an internal error (-32603).
 */
import { afterEach, describe, expect, it } from "vitest";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, harness, structured } from "../tools/harness.js";

let h: Harness | undefined;
fakeTimeEach();
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function failure(p: Promise<unknown>): Promise<{ code?: number; message: string; data?: unknown }> {
  try {
    await p;
  } catch (err) {
    return err as { code?: number; message: string; data?: unknown };
  }
  throw new Error("the read succeeded");
}

describe("resources that do not exist", () => {
  it("answers resource-not-found for an output index the task does not have, and for an unknown task", async () => {
    h = await harness();
    const gen = structured<{ task: { id: string } }>(
      await h.call("generate_image", { model: "sandbox-image-fast", prompt: "fox", wait: 10 }),
    );
    const uri = `generation://tasks/${gen.task.id}/outputs/5`;
    const output = await failure(h.mcp.readResource({ uri }));
    expect(output.code).toBe(-32602);
    expect(output.data).toEqual({ uri });
    expect(output.message).toMatch(/NOT_FOUND: task \S+ has no downloadable output #5.*poll_task/);
    const task = await failure(h.mcp.readResource({ uri: "generation://tasks/task_missing" }));
    expect(task.code).toBe(-32602);
    expect(task.data).toEqual({ uri: "generation://tasks/task_missing" });
    expect(task.message).not.toMatch(/report it/i);
  });
});
