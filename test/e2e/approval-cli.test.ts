/**
 * Approval without a dialog through the built CLI over stdio, against a sandbox on loopback:
 * - a host without elicitation gets a quote (nothing sent), and the same call with the approval
 *   token is sent once with maxGems at most the amount; the token again is refused;
 * - two CLI processes on one SQLite store: a token quoted by one is accepted once by the other,
 *   and refused by the first after that;
 * - the operator's cap: a call naming more is sent with the cap; an estimate above it is refused;
 * - a host that declares elicitation and never answers gets the quote within the bound.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUESTION_ANSWER_MS } from "../../src/config/time-limits.js";
import { CLI, connectCli } from "../helpers/cli.js";
import { type LoopbackSandbox, loopbackSandbox } from "../helpers/loopback-sandbox.js";

const IMAGE = "POST /api/generate/image";
type Result = Awaited<ReturnType<Client["callTool"]>>;
type Quoted = { approval: { token: string; gems: number; tell: string } };
type Made = { task: { quotedGems: number } };
const textOf = (r: Result): string =>
  (r.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");

let loopback: LoopbackSandbox;
beforeAll(async () => {
  loopback = await loopbackSandbox({ timeScale: 20 });
});
afterAll(() => loopback.stop());

const image = (prompt: string, extra: Record<string, unknown> = {}) => ({
  name: "generate_image",
  arguments: {
    model: "sandbox-image-pro",
    prompt,
    parameters: { resolution: "4K", outputCount: 2 },
    wait: 0,
    ...extra,
  },
});

describe("approval without a dialog (built CLI, stdio)", () => {
  it("quotes, then sends the approved call once under the amount; the token counts once", async () => {
    const { client } = await connectCli({
      args: [CLI],
      env: loopback.envOf("quote", { GENERATION_CONFIRM_ABOVE_GEMS: "10" }),
    });
    const { sandbox } = loopback;
    try {
      const before = sandbox.stats.requests(IMAGE);
      const q = await client.callTool(image("quoted"));
      expect(q.isError).toBeFalsy();
      expect(textOf(q)).toMatch(/^QUOTE: nothing was sent/);
      const { approval } = q.structuredContent as Quoted;
      expect(approval.gems).toBe(64);
      expect(approval.tell).toMatch(/resolution 4K/);
      expect(sandbox.stats.requests(IMAGE)).toBe(before);
      const r = await client.callTool(image("quoted", { approval: approval.token }));
      expect(r.isError, textOf(r)).toBeFalsy();
      expect((r.structuredContent as Made).task.quotedGems).toBeLessThanOrEqual(64);
      expect(textOf(r)).toMatch(/Sent with maxGems 64, the amount the user approved/);
      const again = await client.callTool(image("quoted", { approval: approval.token }));
      expect(textOf(again)).toMatch(/^INVALID_ARGUMENT: approval: this approval was already used/);
      expect(sandbox.stats.requests(IMAGE)).toBe(before + 1);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("two processes on one store: a token from one is accepted once by the other", async () => {
    const env = loopback.envOf("shared-store", { GENERATION_CONFIRM_ABOVE_GEMS: "10" });
    const one = await connectCli({ args: [CLI], env });
    const two = await connectCli({ args: [CLI], env });
    const { sandbox } = loopback;
    try {
      const before = sandbox.stats.requests(IMAGE);
      const q = await one.client.callTool(image("replicas"));
      const { token } = (q.structuredContent as Quoted).approval;
      const r = await two.client.callTool(image("replicas", { approval: token }));
      expect(r.isError, textOf(r)).toBeFalsy();
      const back = await one.client.callTool(image("replicas", { approval: token }));
      expect(textOf(back)).toMatch(/^INVALID_ARGUMENT: approval: this approval was already used/);
      expect(sandbox.stats.requests(IMAGE)).toBe(before + 1);
    } finally {
      await Promise.all([one.client.close(), two.client.close()]);
    }
  }, 60_000);

  it("the operator's cap: a larger maxGems is sent as the cap, an estimate above it refused", async () => {
    const { client } = await connectCli({
      args: [CLI],
      env: loopback.envOf("cap", { GENERATION_MAX_GEMS: "20" }),
    });
    const { sandbox } = loopback;
    try {
      const before = sandbox.stats.requests(IMAGE);
      const over = await client.callTool(image("too dear"));
      expect(textOf(over)).toMatch(/^INVALID_ARGUMENT: .*above the operator's cap of 20 Gems/);
      expect(sandbox.stats.requests(IMAGE)).toBe(before);
      const r = await client.callTool(image("capped", { parameters: { resolution: "1K" }, maxGems: 5_000 }));
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(textOf(r)).toMatch(/Sent with maxGems 20, the operator's cap per request/);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("a host that declares elicitation and never answers gets the quote within the bound; nothing sent", async () => {
    const client = new Client({ name: "silent", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    let asked = 0;
    client.setRequestHandler("elicitation/create", () => {
      asked++;
      return new Promise(() => {});
    });
    const env = loopback.envOf("silent", { GENERATION_CONFIRM_ABOVE_GEMS: "10" });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [CLI], env, stderr: "pipe" }),
    );
    const { sandbox } = loopback;
    try {
      const before = sandbox.stats.requests(IMAGE);
      const started = Date.now();
      const q = await client.callTool(image("silence"), { timeout: 60_000 });
      const took = Date.now() - started;
      expect(asked).toBe(1);
      expect(took).toBeGreaterThanOrEqual(QUESTION_ANSWER_MS - 100);
      expect(took).toBeLessThan(45_000);
      expect(textOf(q)).toMatch(/^QUOTE: nothing was sent.*did not answer the question in time/);
      expect((q.structuredContent as Quoted).approval.gems).toBe(64);
      expect(sandbox.stats.requests(IMAGE)).toBe(before);
    } finally {
      await client.close();
    }
  }, 60_000);
});
