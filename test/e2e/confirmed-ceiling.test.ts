/**
 * The amount the user accepts is a ceiling (the built CLI over stdio, against a sandbox on loopback):
 * - for every image model and resolution of the sandbox's catalog, one output and the most the
 *   model makes, the question names the amount and the cost factors it used, and the Gems charged
 *   never exceed the amount in the question;
 * - a quote above the accepted amount is refused (PRICE_CHANGED): nothing dispatched or charged,
 *   and the result says so and what to do;
 * - a client that cannot ask spends no more than GENERATION_CONFIRM_ABOVE_GEMS unapproved, even
 *   with a larger maxGems of its own: it gets a quote (test/e2e/approval-cli.test.ts).
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderImage } from "../../src/sandbox/media/png.js";
import { MODELS } from "../../src/sandbox/model-catalog.js";
import type { Sandbox } from "../../src/sandbox/sandbox.js";
import { CLI, connectCli } from "../helpers/cli.js";
import { type LoopbackSandbox, loopbackSandbox } from "../helpers/loopback-sandbox.js";

const IMAGE = "POST /api/generate/image";
type Result = Awaited<ReturnType<Client["callTool"]>>;
type Task = { id: string; status: string; quotedGems: number; chargedGems: number };
const textOf = (r: Result): string =>
  (r.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");

let loopback: LoopbackSandbox;
let sandbox: Sandbox;

beforeAll(async () => {
  // Fast enough that an image finishes within one call's wait, so its charge can be read.
  loopback = await loopbackSandbox({ timeScale: 20 });
  sandbox = loopback.sandbox;
});

afterAll(() => loopback.stop());

const envOf = (name: string, extra: Record<string, string>) => loopback.envOf(name, extra);

/** A host that can ask its user (elicitation), records each question and accepts it. */
async function accepting(name: string, extra: Record<string, string>) {
  const client = new Client({ name: "accepts", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler("elicitation/create", async (req) => {
    asked.push(String((req.params as { message?: unknown }).message));
    return { action: "accept", content: { confirm: true } };
  });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI],
    env: envOf(name, extra),
    stderr: "pipe",
  });
  await client.connect(transport);
  return { client, asked };
}

/** generate_image with sandbox-image-pro, not waiting. */
const pro = (client: Client, prompt: string, parameters: Record<string, unknown>, extra = {}) =>
  client.callTool({
    name: "generate_image",
    arguments: { model: "sandbox-image-pro", prompt, parameters, wait: 0, ...extra },
  });

/** The amount the question named. */
function askedAmount(question: string | undefined): number {
  const m = /may spend (?:about|up to) ([\d,]+) Gems?/.exec(question ?? "");
  expect(m, `a question naming an amount: ${question}`).not.toBeNull();
  return Number((m?.[1] ?? "").replace(/,/g, ""));
}

/** The task once terminal: the call's own answer, or poll_task until it is. */
async function finished(client: Client, r: Result): Promise<Task> {
  let task = (r.structuredContent as { task: Task }).task;
  for (let i = 0; i < 10 && !["succeeded", "partial", "failed", "cancelled"].includes(task.status); i++) {
    const polled = await client.callTool({ name: "poll_task", arguments: { taskId: task.id, wait: 10 } });
    task = (polled.structuredContent as { task: Task }).task;
  }
  return task;
}

describe("the accepted amount is the ceiling (built CLI, stdio, a host that accepts)", () => {
  it("for every image model, resolution and output count, the charge never exceeds the amount asked", async () => {
    const { client, asked } = await accepting("every-image", { GENERATION_CONFIRM_ABOVE_GEMS: "1" });
    try {
      const data = renderImage("source", "1:1").toString("base64");
      const upload = await client.callTool({
        name: "upload_asset",
        arguments: { data, mimeType: "image/png" },
      });
      const sourceImage = (upload.structuredContent as { asset: { id: string } }).asset.id;
      const images = MODELS.filter((m) => m.kind === "image");
      expect(images.length).toBeGreaterThanOrEqual(3);
      let checked = 0;
      for (const m of images) {
        const resolutions = (m.capabilities.resolutions as string[] | undefined) ?? [];
        const most = (m.capabilities.maxOutputs as number | undefined) ?? 1;
        for (const resolution of resolutions) {
          for (const outputCount of [...new Set([1, most])]) {
            const parameters: Record<string, unknown> = { resolution, outputCount };
            if (m.capabilities.requiresSourceImage === true) parameters.sourceImage = sourceImage;
            const before = asked.length;
            const r = await client.callTool({
              name: "generate_image",
              arguments: {
                model: m.id,
                prompt: `${m.id} ${resolution} x${outputCount}`,
                parameters,
                wait: 15,
              },
            });
            const label = `${m.id} ${resolution} x${outputCount}: ${textOf(r)}`;
            if (m.available === false) {
              // Refused locally before any question: nothing to charge.
              expect(textOf(r), label).toMatch(/^INVALID_ARGUMENT: model: /);
              expect(asked.length, label).toBe(before);
              continue;
            }
            expect(r.isError, label).toBeFalsy();
            expect(asked.length, label).toBe(before + 1);
            const question = asked[asked.length - 1];
            const amount = askedAmount(question);
            // The question says which cost factors it used.
            expect(question, label).toMatch(/baseGems/);
            expect(question, label).toContain(`outputCount ${outputCount}`);
            if (m.capabilities.resolutionMultipliers !== undefined)
              expect(question, label).toContain(`resolution ${resolution}`);
            const task = await finished(client, r);
            expect(task.status, label).toBe("succeeded");
            expect(task.quotedGems, label).toBeLessThanOrEqual(amount);
            expect(task.chargedGems, label).toBeGreaterThan(0);
            expect(task.chargedGems, label).toBeLessThanOrEqual(amount);
            checked++;
          }
        }
      }
      // fast (1K, x1, x4), pro (1K/2K/4K, x1, x4), edit (1K, x1, x2)
      expect(checked).toBe(10);
    } finally {
      await client.close();
    }
  }, 120_000);

  it("a quote above the accepted amount is refused: nothing dispatched or charged, and the result says what to do", async () => {
    const { client, asked } = await accepting("repriced", { GENERATION_CONFIRM_ABOVE_GEMS: "1" });
    try {
      // The service's price at submission is the real one (docs/service.md#versioning): here twice the hint.
      sandbox.faults.inject(IMAGE, { kind: "reprice", factor: 2 });
      const before = sandbox.stats.dispatches(IMAGE);
      const r = await pro(client, "repriced", { resolution: "2K", outputCount: 2 });
      expect(askedAmount(asked[0])).toBe(32);
      expect(r.isError).toBe(true);
      const text = textOf(r);
      expect(text).toMatch(/^PRICE_CHANGED: /);
      expect(text).toMatch(/32 Gems the user accepted/);
      expect(text).toMatch(/nothing was charged/);
      expect(text).toMatch(/call again without approval and with maxGems set to the most the user may spend/);
      expect(sandbox.stats.dispatches(IMAGE)).toBe(before);
    } finally {
      sandbox.faults.clear();
      await client.close();
    }
  }, 60_000);
});

describe("a host that cannot ask (built CLI, stdio)", () => {
  it("never spends above GENERATION_CONFIRM_ABOVE_GEMS unapproved, even with a larger maxGems of its own", async () => {
    const { client } = await connectCli({
      args: [CLI],
      env: envOf("cannot-ask", { GENERATION_CONFIRM_ABOVE_GEMS: "10" }),
    });
    try {
      const before = sandbox.stats.requests(IMAGE);
      const r = await pro(client, "nobody asked", { resolution: "4K", outputCount: 4 }, { maxGems: 1_000 });
      const text = textOf(r);
      // A quote (approval.test.ts follows it through): nothing sent.
      expect(text).toMatch(
        /^QUOTE: nothing was sent and no Gems were spent: this client cannot ask the user/,
      );
      expect(text).toMatch(/above the confirmation threshold of 10 Gems/);
      expect(sandbox.stats.requests(IMAGE)).toBe(before);
      // Under the threshold it goes through, and says which ceiling it was sent with.
      const cheap = await client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt: "cheap", wait: 0 },
      });
      expect(cheap.isError).toBeFalsy();
      expect(textOf(cheap)).toMatch(/Sent with maxGems 10, your confirmation threshold/);
      expect(sandbox.stats.requests(IMAGE)).toBe(before + 1);
    } finally {
      await client.close();
    }
  }, 60_000);
});
