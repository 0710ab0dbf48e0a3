/**
 * Progress while a task runs, as a host that asked for it sees it (built CLI over stdio, sandbox on
 * loopback): the task's age counts from its submission, also in a poll_task made later, and a
 * task slower than its model's recent runs is said to be "expected about now" once, not at every
 * read; no two messages in a row are the same.
 */
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectLoopbackSandbox, type InProcessSandboxedCli } from "../helpers/sandboxed-cli.js";

type Result = Awaited<ReturnType<Client["callTool"]>>;
const textOf = (r: Result): string =>
  (r.content as { type: string; text?: string }[]).find((c) => c.type === "text")?.text ?? "";

let cli: InProcessSandboxedCli;
beforeAll(async () => {
  // Eight times the sandbox's speed: a fast image in well under a second, a [sandbox:slow] one in about 15 s.
  cli = await connectLoopbackSandbox({ timeScale: 8 });
});
afterAll(() => cli?.close());

/** Calls a tool with a progress token, collecting the progress messages. */
async function withProgress(name: string, args: Record<string, unknown>) {
  const messages: string[] = [];
  const result = await cli.client.callTool(
    { name, arguments: args },
    {
      onprogress: (p) => {
        if (p.message !== undefined) messages.push(p.message);
      },
      timeout: 60_000,
    },
  );
  return { result, messages };
}

const ages = (messages: string[]): number[] =>
  messages.map((m) => Number(/, (\d+) s after submission/.exec(m)?.[1] ?? Number.NaN));

describe("progress on a slow task", () => {
  it("counts a later poll_task's time from the submission", async () => {
    const made = await cli.client.callTool({
      name: "generate_image",
      arguments: { model: "sandbox-image-pro", prompt: "a late one [sandbox:slow]", wait: 0 },
    });
    const taskId = /^Task (\S+) /m.exec(textOf(made))?.[1] ?? "";
    await new Promise((r) => setTimeout(r, 4_000));
    const { messages } = await withProgress("poll_task", { taskId, wait: 3 });
    expect(messages.length, messages.join("\n")).toBeGreaterThan(0);
    // Four seconds after the submission at least; never "after 2 s" of the poll itself.
    for (const age of ages(messages)) expect(age).toBeGreaterThanOrEqual(4);
  }, 30_000);

  it("says 'expected about now' at most once, then something new or nothing", async () => {
    // This key's recent runs of the model: well under a second each.
    for (let i = 0; i < 3; i++) {
      const r = await cli.client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt: `a quick one ${i}`, wait: 10 },
      });
      expect(textOf(r)).toMatch(/succeeded/);
    }
    const { result, messages } = await withProgress("generate_image", {
      model: "sandbox-image-fast",
      prompt: "a slow one [sandbox:slow]",
      wait: 40,
    });
    const text = messages.join("\n");
    expect(textOf(result)).toMatch(/succeeded/);
    expect(messages.length, text).toBeGreaterThan(3);
    expect(messages.filter((m) => m.includes("expected about now")).length, text).toBeLessThanOrEqual(1);
    expect(messages.filter((m) => m.includes("longer than the last")).length, text).toBeLessThanOrEqual(1);
    for (let i = 1; i < messages.length; i++) expect(messages[i], text).not.toBe(messages[i - 1]);
    const counted = ages(messages).filter((a) => !Number.isNaN(a));
    expect(counted.length, text).toBeGreaterThan(0);
  }, 60_000);
});
