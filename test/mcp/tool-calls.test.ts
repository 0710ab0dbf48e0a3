/**
 * The one tools/call handler every server answers with (answerToolCalls, src/mcp/define-tool.ts),
 * in place of the SDK's per-tool registration: over the 2026-07-28 wire, in raw JSON-RPC (the SDK's
 * client cannot read a task handed back), it keeps the rule the SDK kept for a tool with an output
 * schema (a result that is no error carries structuredContent), hands a task (`resultType: "task"`)
 * and a question (`input_required`) back as they are, gives the tool the requestState its server
 * verified, and names an unknown tool as the SDK does.
 */
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AskedState, answerCodec, verifyAnswers } from "../../src/mcp/answers.js";
import type { Engine } from "../../src/mcp/context.js";
import {
  answerToolCalls,
  defineTool,
  listing,
  type ToolDefinition,
  type ToolEntry,
  type ToolOutcome,
} from "../../src/mcp/define-tool.js";
import type { CreateTaskResult } from "../../src/mcp/mcp-task-wire.js";
import { okResult } from "../../src/mcp/results.js";
import { envelope } from "../helpers/tasks-wire.js";

const HINTS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const CREATED = "2026-07-28T00:00:00.000Z";

const tool = (name: string, handler: ToolDefinition["handler"]): ToolEntry => {
  const def = defineTool({
    name,
    title: name,
    description: `${name}, for this test.`,
    inputSchema: z.strictObject({}),
    outputSchema: z.object({ said: z.string().describe("What the tool said."), next: z.string() }),
    annotations: HINTS,
    handler,
  }) as unknown as ToolDefinition;
  return { listed: listing(def), load: async () => def };
};

const TABLE = new Map(
  [
    tool("shaped", async () => okResult("Said it.", { said: "it", next: "nothing: done" })),
    tool("bare", async () => ({ content: [{ type: "text", text: "no structure" }] })),
    tool("failed", async () => ({ content: [{ type: "text", text: "FAILED: it broke." }], isError: true })),
    tool("task", async () => {
      // As src/calls/mcp-task/mcp-task-background.ts hands one back.
      const created: CreateTaskResult = {
        resultType: "task",
        taskId: "task-1",
        status: "working",
        createdAt: CREATED,
        lastUpdatedAt: CREATED,
        ttlMs: 60_000,
      };
      return created as unknown as ToolOutcome;
    }),
    tool("asks", async () => ({ resultType: "input_required", requestState: "opaque" })),
    tool("answered", async (_args, ctx) =>
      okResult("Read.", { said: JSON.stringify(ctx.answered ?? null), next: "nothing: done" }),
    ),
  ].map((t) => [t.listed.name, t]),
);

const engine = {
  keyHash: "k".repeat(64),
  client: { scrub: (text: string) => text },
  key: { origin: "environment", refused: false },
} as unknown as Engine;

function serve() {
  const handler = createMcpHandler(() => {
    const server = new McpServer(
      { name: "tool-calls", version: "1.0.0" },
      { capabilities: { tools: {} }, requestState: { verify: verifyAnswers(engine) } },
    );
    answerToolCalls(server, engine, TABLE);
    return server;
  });
  let id = 0;
  // biome-ignore lint/suspicious/noExplicitAny: raw wire answers are read field by field.
  return async (name: string, extra: Record<string, unknown> = {}): Promise<any> => {
    const body = {
      jsonrpc: "2.0",
      id: ++id,
      method: "tools/call",
      params: { name, arguments: {}, ...extra, _meta: envelope() },
    };
    const response = await handler.fetch(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": name,
        },
        body: JSON.stringify(body),
      }),
    );
    const text = await response.text();
    const data = text.split("\n").find((l) => l.startsWith("data:"));
    return JSON.parse(data === undefined ? text : data.slice(5));
  };
}

describe("tools/call through one handler per server", () => {
  it("keeps the output schema's rule: a result that is no error carries structuredContent", async () => {
    const call = serve();
    expect((await call("shaped")).result).toMatchObject({ structuredContent: { said: "it" } });
    const bare = (await call("bare")).result;
    expect(bare.isError).toBe(true);
    expect(bare.content[0].text).toContain("bare has an output schema but returned no structuredContent");
    // A tool's own error needs none.
    expect((await call("failed")).result).toMatchObject({
      isError: true,
      content: [{ text: "FAILED: it broke." }],
    });
  });

  it("hands back a task and a question as they are", async () => {
    const call = serve();
    const task = (await call("task")).result;
    expect(task).toMatchObject({ resultType: "task", taskId: "task-1", status: "working", ttlMs: 60_000 });
    expect(task).not.toHaveProperty("isError");
    expect((await call("asks")).result).toMatchObject({
      resultType: "input_required",
      requestState: "opaque",
    });
  });

  it("gives the tool the requestState its server verified, and nothing for one that does not verify", async () => {
    const call = serve();
    const asked: AskedState = { tool: "answered", args: "a".repeat(64), asked: { spend: 16 }, nonce: "n-1" };
    const sealed = await answerCodec(engine).mint(asked);
    const read = await call("answered", { requestState: sealed, inputResponses: {} });
    expect(JSON.parse(read.result.structuredContent.said)).toEqual(asked);
    const forged = await call("answered", { requestState: `${sealed}x`, inputResponses: {} });
    expect(forged.result.structuredContent.said).toBe("null");
  });

  it("answers an unknown tool as the SDK does: a protocol error naming it", async () => {
    const answer = await serve()("nowhere");
    expect(answer.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining("Tool nowhere not found"),
    });
  });
});
