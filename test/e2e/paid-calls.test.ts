/**
 * The paid call as users run it: the built CLI (dist/cli.js) over stdio and Streamable HTTP,
 * against a sandbox listening on loopback.
 * - Calls that joined an identical call in flight, or replayed an earlier one, say so
 *   (`created: false` and in their text); the one that made the work says `created: true`.
 * - Under HTTP load with faults, every answer after a claim carries its identity, and no listener
 *   piles up on a shared signal (no MaxListenersExceededWarning on stderr).
 * - The delivered mark and the answer are one step as the next call sees them: an identical call
 *   right after a delivered result is new work, and list_requests says "delivered".
 * - GENERATION_CONFIRM_ABOVE_GEMS asks only above an estimate; otherwise the threshold is sent as
 *   maxGems and the result says so.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/sandbox.js";
import { CLI, connectCli, type Started, startHttpCli } from "../helpers/cli.js";
import { type LoopbackSandbox, loopbackSandbox } from "../helpers/loopback-sandbox.js";

const IMAGE = "POST /api/generate/image";

type Result = Awaited<ReturnType<Client["callTool"]>>;
const textOf = (r: Result): string =>
  (r.content as { type: string; text?: string }[]).find((c) => c.type === "text")?.text ?? "";
const structuredOf = (r: Result) => r.structuredContent as Record<string, unknown> | undefined;

let loopback: LoopbackSandbox;
let sandbox: Sandbox;

beforeAll(async () => {
  loopback = await loopbackSandbox({ timeScale: 0.05 });
  sandbox = loopback.sandbox;
});

afterAll(() => loopback.stop());

/** The environment of the built CLI against the loopback sandbox, with its own ledger file. */
const envOf = (name: string, extra: Record<string, string> = {}) => loopback.envOf(name, extra);

const stdio = (name: string) => connectCli({ args: [CLI], env: envOf(name) });

/** As `stdio`, from a client that can answer elicitations: it records each question and declines. */
async function asking(name: string, extra: Record<string, string>) {
  const env = envOf(name, extra);
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  const client = new Client({ name: "asks", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler("elicitation/create", async (req) => {
    asked.push(String((req.params as { message?: unknown }).message));
    return { action: "decline" };
  });
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI], env, stderr: "pipe" });
  await client.connect(transport);
  return { client, asked };
}

describe("joined and replayed calls say they created nothing (built CLI, stdio)", () => {
  it("three identical generate_image calls in parallel: one task, one created: true", async () => {
    const { client } = await stdio("joined");
    try {
      const before = sandbox.stats.dispatches(IMAGE);
      const args = { model: "sandbox-image-fast", prompt: "three at once", wait: 0 };
      const results = await Promise.all(
        [0, 1, 2].map(() => client.callTool({ name: "generate_image", arguments: args })),
      );
      expect(sandbox.stats.dispatches(IMAGE) - before).toBe(1);
      const created = results.map((r) => structuredOf(r)?.created);
      expect(created.filter((c) => c === true)).toHaveLength(1);
      expect(created.filter((c) => c === false)).toHaveLength(2);
      const ids = new Set(results.map((r) => structuredOf(r)?.idempotencyKey));
      expect(ids.size).toBe(1);
      for (const r of results.filter((r) => structuredOf(r)?.created === false)) {
        expect(textOf(r)).toMatch(/joined an identical call in flight: one request, not charged twice/);
      }
      // How to get several different results is said once, not in all three answers.
      const told = results.filter((r) =>
        /several different results: .*parameters\.outputCount.*vary the prompt.*own idempotencyKey/.test(
          textOf(r),
        ),
      );
      expect(told, results.map(textOf).join("\n---\n")).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it("a chat replayed under its idempotencyKey says so, in text and created: false", async () => {
    const { client } = await stdio("chat-replay");
    try {
      const args = {
        model: "sandbox-chat-small",
        messages: [{ role: "user", content: "once" }],
        idempotencyKey: "chat-replay-1",
      };
      const first = await client.callTool({ name: "chat", arguments: args });
      expect(structuredOf(first)).toMatchObject({ idempotencyKey: "chat-replay-1", created: true });
      const again = await client.callTool({ name: "chat", arguments: args });
      expect(structuredOf(again)).toMatchObject({ idempotencyKey: "chat-replay-1", created: false });
      expect(structuredOf(again)?.content).toBe(structuredOf(first)?.content);
      expect(textOf(again)).toMatch(
        /continues an earlier request under the same identity: not charged twice/,
      );
      expect(textOf(again)).toMatch(/Gems: none charged by this call/);
    } finally {
      await client.close();
    }
  });
});

describe("the delivered mark and the answer are one step (built CLI, stdio)", () => {
  it("an identical call right after a result is new work, and list_requests says delivered", async () => {
    const { client } = await stdio("delivered");
    try {
      const args = { model: "sandbox-image-fast", prompt: "again and again", wait: 0 };
      let last: string | undefined;
      for (let i = 0; i < 5; i++) {
        const r = await client.callTool({ name: "generate_image", arguments: args });
        const s = structuredOf(r);
        expect(s?.created).toBe(true);
        expect(s?.idempotencyKey).not.toBe(last);
        last = s?.idempotencyKey as string;
        const listed = await client.callTool({ name: "list_requests", arguments: { idempotencyKey: last } });
        const requests = structuredOf(listed)?.requests as { delivered?: boolean }[];
        expect(requests[0]).toMatchObject({ delivered: true });
        expect(textOf(listed)).not.toMatch(/not delivered/);
      }
    } finally {
      await client.close();
    }
  });
});

describe("the confirmation threshold asks only above an estimate (built CLI, stdio)", () => {
  it("chat and video send the threshold as maxGems without asking, and say so", async () => {
    const c = await asking("threshold", { GENERATION_CONFIRM_ABOVE_GEMS: "5" });
    try {
      const chat = await c.client.callTool({
        name: "chat",
        arguments: { model: "sandbox-chat-small", messages: [{ role: "user", content: "cheap" }] },
      });
      expect(chat.isError).toBeFalsy();
      expect(textOf(chat)).toMatch(/Sent with maxGems 5, your confirmation threshold/);
      const video = await c.client.callTool({
        name: "generate_video",
        arguments: {
          model: "sandbox-video-lite",
          prompt: "a wave",
          parameters: { mode: "text-to-video" },
          wait: 0,
        },
      });
      // The video's quote is above 5 Gems: refused by the service, nothing spent, and how to go above it.
      expect(textOf(video)).toMatch(
        /^PRICE_CHANGED: [\s\S]*GENERATION_CONFIRM_ABOVE_GEMS \(5\), sent as maxGems/,
      );
      expect(c.asked).toEqual([]);
      // An estimate above the threshold is still asked about (and declining sends nothing).
      const pro = await c.client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-pro", prompt: "dear", wait: 0 },
      });
      expect(textOf(pro)).toMatch(/^USER_DECLINED: /);
      expect(c.asked).toHaveLength(1);
      expect(c.asked[0]).toMatch(/about 8 Gems \(the catalog's estimate: baseGems 8/);
    } finally {
      await c.client.close();
    }
  });
});

describe("HTTP load with faults (built CLI)", () => {
  let http: Started;

  beforeAll(async () => {
    http = await startHttpCli([], envOf("load"));
  });

  afterAll(async () => {
    sandbox.faults.clear();
    await http.stop();
  });

  it("every answer after a claim carries its identity; no listener piles up", async () => {
    const sessions = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const client = new Client({ name: "load", version: "1.0.0" });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(http.url), {
            requestInit: { headers: { authorization: `Bearer ${loopback.key}` } },
          }),
        );
        return client;
      }),
    );
    // Hangs outlast the 8 s budget of a wait-0 call; 503s and lost answers are replayed.
    sandbox.faults.inject(IMAGE, { kind: "hang", commit: true }, 20);
    sandbox.faults.inject(IMAGE, { status: 503, code: "TEMPORARILY_UNAVAILABLE" }, 40);
    sandbox.faults.inject(IMAGE, { kind: "reset-after-commit" }, 20);
    sandbox.faults.inject(IMAGE, { status: 409, code: "REQUEST_UNCERTAIN", commit: true }, 20);
    try {
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => {
          const client = sessions[i % 5] as Client;
          // 51 distinct bodies: 49 pairs of twins sent together on two sessions, and 2 singles.
          const prompt = `load ${i < 98 ? Math.floor(i / 2) : i}`;
          const args = { model: "sandbox-image-fast", prompt, wait: 0 };
          return client.callTool({ name: "generate_image", arguments: args }, { timeout: 30_000 });
        }),
      );
      const missing = results.filter((r) => !/\bgm-[0-9a-z]+-[0-9a-f]{16}\b/.test(textOf(r)));
      expect(missing.map(textOf)).toEqual([]);
      for (const r of results.filter((r) => !r.isError)) {
        expect(structuredOf(r)?.idempotencyKey).toMatch(/^gm-/);
      }
    } finally {
      await Promise.all(sessions.map((c) => c.close()));
    }
    expect(http.stderr()).not.toMatch(/MaxListenersExceededWarning/);
  }, 60_000);
});
