/**
 * A result's suggested next step never asks for a call longer than hosts allow: with
 * GENERATION_WAIT_SECONDS=600, a running task's `poll_task {"wait": N}` suggests at most the wait
 * that fits a call without a `wait` of its own (DEFAULT_WAIT_CAP_SECONDS, src/config/time-limits.ts),
 * from the generation tool and from poll_task alike (built CLI over stdio, sandbox on loopback).
 */
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_BUDGET_CAP_MS,
  DEFAULT_WAIT_CAP_SECONDS,
  GRACE_SECONDS,
} from "../../src/config/time-limits.js";
import { connectLoopbackSandbox, type InProcessSandboxedCli } from "../helpers/sandboxed-cli.js";

type Result = Awaited<ReturnType<Client["callTool"]>>;
const textOf = (r: Result): string =>
  (r.content as { type: string; text?: string }[]).find((c) => c.type === "text")?.text ?? "";
const suggested = (text: string): number[] =>
  [...text.matchAll(/poll_task with \{"taskId": "[^"]+", "wait": (\d+)\}/g)].map((m) => Number(m[1]));

let cli: InProcessSandboxedCli;
beforeAll(async () => {
  cli = await connectLoopbackSandbox({ env: { GENERATION_WAIT_SECONDS: "600" } });
});
afterAll(() => cli?.close());

describe("GENERATION_WAIT_SECONDS=600: the suggested wait fits one call", () => {
  it("is the cap that default waits have, within the ~60 s hosts allow", () => {
    expect(DEFAULT_WAIT_CAP_SECONDS + GRACE_SECONDS).toBe(DEFAULT_BUDGET_CAP_MS / 1000);
    expect(DEFAULT_WAIT_CAP_SECONDS + GRACE_SECONDS).toBeLessThan(60);
  });

  it("generate_image and poll_task suggest poll_task with at most that wait", async () => {
    const made = await cli.client.callTool({
      name: "generate_image",
      arguments: { model: "sandbox-image-fast", prompt: "a slow one [sandbox:slow]", wait: 0 },
    });
    const text = textOf(made);
    expect(made.isError, text).toBeFalsy();
    expect(suggested(text), text).toEqual([DEFAULT_WAIT_CAP_SECONDS]);

    const taskId = /^Task (\S+) /m.exec(text)?.[1] ?? "";
    const polled = await cli.client.callTool({ name: "poll_task", arguments: { taskId } });
    expect(suggested(textOf(polled)), textOf(polled)).toEqual([DEFAULT_WAIT_CAP_SECONDS]);
  }, 30_000);
});
