/**
 * Every call answers within its budget, through the shipped bundle: `dist/cli.js` on stdio against
 * the sandbox service listening on loopback (as `generation-mcp sandbox --port 0` runs it, in this
 * process so faults can be injected). A submission the service never answers comes back within
 * `wait` plus a few seconds as "uncertain, identity X"; the identical call later replays it.
 */
import type { Client } from "@modelcontextprotocol/client";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRACE_SECONDS } from "../../src/config/time-limits.js";
import { runSandboxServer, SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { CLI, connectCli, isolatedEnv } from "../helpers/cli.js";

const IMAGE = "POST /api/generate/image";
const iso = isolatedEnv();
let service: Awaited<ReturnType<typeof runSandboxServer>>;
let client: Client;

beforeAll(async () => {
  service = await runSandboxServer({ host: "127.0.0.1", port: 0 });
  ({ client } = await connectCli({
    args: [CLI],
    env: { ...iso.env, GENERATION_BASE_URL: service.url, GENERATION_API_KEY: SANDBOX_API_KEY },
    name: "budget-test",
  }));
});

afterAll(async () => {
  await client?.close();
  await service?.close();
  iso.cleanup();
});

const textOf = (r: CallToolResult): string =>
  r.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");

describe("the call budget, through the built CLI", () => {
  it("answers a submission the service never answers within wait + grace, with the identity; the identical call replays it", async () => {
    service.sandbox.faults.inject(IMAGE, { kind: "hang" });
    const args = { model: "sandbox-image-fast", prompt: "a heron at dusk", wait: 2 };
    const started = Date.now();
    const first = (await client.callTool(
      { name: "generate_image", arguments: args },
      { timeout: 60_000 },
    )) as CallToolResult;
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan((args.wait + GRACE_SECONDS) * 1000 + 1_500);
    expect(first.isError).toBe(true);
    const text = textOf(first);
    expect(text).toMatch(/^TIMEOUT: .*within this call's budget/);
    const identity =
      /Identity \(idempotencyKey\): (\S+)\. Keep it: calling again with the same arguments/.exec(text)?.[1];
    expect(identity).toMatch(/^[a-zA-Z0-9_.:-]{1,128}$/);
    expect(service.sandbox.stats.dispatches(IMAGE)).toBe(1);

    const again = (await client.callTool({ name: "generate_image", arguments: args })) as CallToolResult;
    expect(again.isError ?? false, textOf(again)).toBe(false);
    const s = again.structuredContent as { idempotencyKey: string; created: boolean };
    expect(s.idempotencyKey).toBe(identity);
    expect(s.created).toBe(false);
    expect(service.sandbox.stats.dispatches(IMAGE)).toBe(1);
    expect(JSON.stringify([first, again])).not.toContain(SANDBOX_API_KEY);
  });

  it("gives up one unanswered attempt as uncertain and replays the identity within the budget: the task, not a timeout", async () => {
    service.sandbox.faults.inject(IMAGE, { kind: "hang" });
    const before = service.sandbox.stats.dispatches(IMAGE);
    const started = Date.now();
    const r = (await client.callTool(
      { name: "generate_image", arguments: { model: "sandbox-image-fast", prompt: "an egret", wait: 20 } },
      { timeout: 60_000 },
    )) as CallToolResult;
    expect(Date.now() - started).toBeLessThan((20 + GRACE_SECONDS) * 1000);
    expect(r.isError ?? false, textOf(r)).toBe(false);
    const s = r.structuredContent as { created: boolean; task: { id: string } };
    // The first attempt's work was committed before the hang: the replay returns it.
    expect(s.created).toBe(false);
    expect(textOf(r)).toContain(s.task.id);
    expect(service.sandbox.stats.dispatches(IMAGE)).toBe(before + 1);
  });
});
