/**
 * What the SDK 1.x tasks client (@modelcontextprotocol/sdk 1.32, as desktop hosts built on it drive
 * servers: `client.experimental.tasks.callToolStream` with `task: {}`) shows of a call answered
 * before its claim on the 2025-11-25 wire, through the built CLI over stdio and HTTP against a
 * sandbox on loopback (GENERATION_CONFIRM_ABOVE_GEMS=10, a client without elicitation).
 * That client reads the answer to a task-augmented tools/call as a CreateTaskResult only: a plain
 * result becomes an opaque -32603 ("Task creation did not return a task" or a schema error) and the
 * message is lost. So a quote and a refusal come back as a task completed with them as its result,
 * which the client yields as its `result`: the quote's token and amount, the refusal's message. The
 * quote's token then sends the call, as a task too, charged within the amount.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, startHttpCli } from "../helpers/cli.js";
import { type LoopbackSandbox, loopbackSandbox } from "../helpers/loopback-sandbox.js";

const IMAGE = "POST /api/generate/image";
const VIDEO = "POST /api/generate/video";
const pro = (prompt: string) => ({
  model: "sandbox-image-pro",
  prompt,
  parameters: { resolution: "2K", outputCount: 2 },
});

type Message = { type: string; task?: { taskId: string; status: string }; result?: Result; error?: Error };
type Result = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: {
    approval?: { token: string; gems: number };
    task?: { id: string; status: string; chargedGems: number };
    items?: Array<{ task?: { status: string; chargedGems: number } }>;
    gems?: { charged: number };
  };
};

/** Every message the SDK 1.x client yields for a task-augmented call, in order. */
async function stream(client: Client, name: string, args: Record<string, unknown>): Promise<Message[]> {
  const seen: Message[] = [];
  const calls = client.experimental.tasks.callToolStream({ name, arguments: args }, undefined, { task: {} });
  for await (const m of calls) seen.push(m as unknown as Message);
  return seen;
}

/** The last message, which the SDK guarantees is its `result` or its `error`. */
function last(seen: Message[]): Message {
  const m = seen.at(-1);
  if (m === undefined) throw new Error("the stream yielded nothing");
  return m;
}

const text = (r: Result | undefined) => r?.content.find((c) => c.type === "text")?.text ?? "";

let loopback: LoopbackSandbox;
beforeAll(async () => {
  loopback = await loopbackSandbox({ timeScale: 20 });
});
afterAll(() => loopback.stop());

const transports = {
  stdio: async (env: Record<string, string>) => ({
    transport: new StdioClientTransport({ command: process.execPath, args: [CLI], env }),
    stop: async () => {},
  }),
  http: async (env: Record<string, string>) => {
    const server = await startHttpCli([], env);
    return { transport: new StreamableHTTPClientTransport(new URL(server.url)), stop: () => server.stop() };
  },
};

for (const [wire, open] of Object.entries(transports)) {
  describe(`the SDK 1.x tasks client over ${wire}, on 2025-11-25`, () => {
    let client: Client;
    let stop: () => Promise<void>;
    beforeAll(async () => {
      const env = loopback.envOf(`sdk1-${wire}`, { GENERATION_CONFIRM_ABOVE_GEMS: "10" });
      const opened = await open(env);
      stop = opened.stop;
      client = new Client({ name: "sdk1-tasks", version: "1.0.0" }, { capabilities: {} });
      await client.connect(opened.transport);
      // The client learns which tools take tasks from tools/list (execution.taskSupport).
      await client.listTools();
    }, 30_000);
    afterAll(async () => {
      await client?.close();
      await stop?.();
    });

    it("shows a quote as the result of a completed task, and its token sends the call once, charged within it", async () => {
      const { sandbox } = loopback;
      const before = sandbox.stats.requests(IMAGE);
      const args = pro(`a kingfisher over ${wire}`);
      const quoted = await stream(client, "generate_image", args);
      expect(quoted.map((m) => m.type)).toEqual(["taskCreated", "taskStatus", "result"]);
      expect(quoted[0]?.task?.status).toBe("completed");
      const quote = last(quoted).result;
      expect(text(quote)).toMatch(/^QUOTE: nothing was sent and no Gems were spent/);
      const approval = quote?.structuredContent?.approval;
      expect(approval?.gems).toBe(32);
      expect(sandbox.stats.requests(IMAGE)).toBe(before);

      const sent = await stream(client, "generate_image", { ...args, approval: approval?.token });
      expect(sent[0]?.type).toBe("taskCreated");
      const done = last(sent);
      expect(done.type, String(done.error)).toBe("result");
      expect(done.result?.isError ?? false, text(done.result)).toBe(false);
      const task = done.result?.structuredContent?.task;
      expect(task?.status).toBe("succeeded");
      expect(task?.chargedGems).toBeLessThanOrEqual(32);
      expect(sandbox.stats.requests(IMAGE)).toBe(before + 1);
    }, 60_000);

    it("shows a batch's quote the same way, for the total", async () => {
      const items = ["one", "two"].map((p) => ({ tool: "generate_image", arguments: pro(`${p} ${wire}`) }));
      const quote = last(await stream(client, "generate_batch", { items }));
      expect(quote.type).toBe("result");
      expect(text(quote.result)).toMatch(/^QUOTE: /);
      expect(quote.result?.structuredContent?.approval?.gems).toBe(64);
    }, 60_000);

    it("shows a refusal before the claim as the result, its message whole, not an opaque -32603", async () => {
      const before = loopback.sandbox.stats.requests(VIDEO);
      const refused = last(await stream(client, "generate_video", { model: "nope", prompt: "waves" }));
      expect(refused.type, String(refused.error)).toBe("result");
      expect(refused.result?.isError).toBe(true);
      expect(text(refused.result)).toMatch(/^INVALID_ARGUMENT: model: "?nope"? is not in the model catalog/);
      expect(loopback.sandbox.stats.requests(VIDEO)).toBe(before);
    }, 30_000);
  });
}
