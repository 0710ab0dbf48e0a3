import { Client } from "@modelcontextprotocol/client";
import { type CallToolResult, InMemoryTransport, McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { ServiceClient } from "../../src/client/service-client.js";
import { hashKey } from "../../src/ledger/open-ledger.js";
import { renderVideo } from "../../src/sandbox/media/mp4.js";
import { createMcpServer } from "../../src/surface/assemble.js";
import { registerResources } from "../../src/surface/resources.js";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { BASE_URL, checkOutput, type Harness, harness, structured, textOf } from "./harness.js";

const CHAT = "POST /api/generate/text/v1/chat/completions";
const EXTRACT = "POST /api/generate/extract/video";

let h: Harness;
fakeTimeEach();
afterEach(() => h?.close());

type ChatOut = {
  idempotencyKey: string;
  id: string;
  model: string;
  content: string;
  finishReason: string | null;
  usage: Record<string, number> | null;
};

describe("chat", () => {
  it("streams, reports progress, and returns the whole answer with usage, finish reason and identity", async () => {
    h = await harness();
    const progress: string[] = [];
    const r = await h.call(
      "chat",
      {
        model: "sandbox-chat-small",
        messages: [{ role: "user", content: "Tell me a long story about foxes." }],
        max_tokens: 400,
      },
      { onprogress: (p) => progress.push(String(p.message)) },
    );
    const s = structured<ChatOut>(r);
    expect(s.content.length).toBeGreaterThan(0);
    expect(progress[0]).toMatch(/^Received \d+ characters/);
    expect(s.finishReason).toBeTruthy();
    expect(s.usage).not.toBeNull();
    expect(textOf(r)).toContain(s.content);
    expect(textOf(r)).toContain(s.idempotencyKey);
    expect(h.sandbox.stats.dispatches(CHAT)).toBe(1);
    const [record] = await h.ledger.list(h.engine.keyHash);
    expect(record).toMatchObject({ tool: "chat", state: "succeeded", delivered: true });
  });

  it("replays the saved answer when the same idempotencyKey is used again", async () => {
    h = await harness();
    const args = {
      model: "sandbox-chat-small",
      messages: [{ role: "user", content: "hi" }],
      idempotencyKey: "chat-1",
    };
    const a = structured<ChatOut>(await h.call("chat", args));
    const b = structured<ChatOut>(await h.call("chat", args));
    expect(b.content).toBe(a.content);
    expect(b.idempotencyKey).toBe("chat-1");
    expect(h.sandbox.stats.dispatches(CHAT)).toBe(1);
  });

  it("three identical chats at once: one request, and one answer says how to get different ones", async () => {
    h = await harness();
    const args = { model: "sandbox-chat-small", messages: [{ role: "user", content: "a name for a cat" }] };
    const results = await Promise.all([0, 1, 2].map(() => h.call("chat", args)));
    expect(new Set(results.map((r) => structured<{ idempotencyKey: string }>(r).idempotencyKey)).size).toBe(
      1,
    );
    expect(h.sandbox.stats.dispatches(CHAT)).toBe(1);
    const told = results.filter((r) =>
      /several different results: vary the messages of each call, or give each call its own idempotencyKey/.test(
        textOf(r),
      ),
    );
    expect(told).toHaveLength(1);
  });

  it("refuses a bad conversation locally", async () => {
    h = await harness();
    const none = await h.call("chat", { model: "sandbox-chat-small", messages: [] });
    expect(textOf(none)).toMatch(/^INVALID_ARGUMENT: messages: .*1/);
    const role = await h.call("chat", {
      model: "sandbox-chat-small",
      messages: [{ role: "tool", content: "x" }],
    });
    expect(textOf(role)).toMatch(/^INVALID_ARGUMENT: messages\[0\]\.role: /);
    const extra = await h.call("chat", {
      model: "sandbox-chat-small",
      messages: [{ role: "user", content: "x" }],
      tools: [],
    });
    expect(textOf(extra)).toMatch(/^INVALID_ARGUMENT: tools: unknown argument/);
    // Nothing sent: at most the (free) model catalog was read, to judge the model first.
    expect(h.sandbox.stats.requests(CHAT)).toBe(0);
    expect(h.sandbox.stats.requests()).toBeLessThanOrEqual(1);
  });
});

describe("extract_video", () => {
  it("analyses an uploaded video and returns the extraction with its identity", async () => {
    h = await harness();
    const data = renderVideo("clip", 3, "16:9").toString("base64");
    const asset = await h.uploadReady({ data, mimeType: "video/mp4" });
    const r = await h.call("extract_video", { videoAssetId: asset.id, prompt: "What happens?" });
    const s = structured<{
      idempotencyKey: string;
      id: string;
      extraction: { durationSeconds: number; frames: unknown[] };
    }>(r);
    expect(s.extraction.durationSeconds).toBeGreaterThan(0);
    expect(textOf(r)).toContain(s.idempotencyKey);
    expect(h.sandbox.stats.dispatches(EXTRACT)).toBe(1);
  });
});

describe("discovery, ledger and resources", () => {
  it("list_models filters by kind", async () => {
    h = await harness();
    const all = structured<{ models: { kind: string }[]; accountingPeriod: string }>(
      await h.call("list_models", {}),
    );
    expect(all.accountingPeriod).toBe("UTC calendar month");
    const video = structured<{ models: { kind: string }[] }>(await h.call("list_models", { kind: "video" }));
    expect(video.models.length).toBeGreaterThan(0);
    expect(video.models.every((m) => m.kind === "video")).toBe(true);
    expect(video.models.length).toBeLessThan(all.models.length);
    // The listing is written once per catalog and kind (list_models.ts): each kind keeps its own.
    const [allText, videoText, allAgain] = [
      textOf(await h.call("list_models", {})),
      textOf(await h.call("list_models", { kind: "video" })),
      textOf(await h.call("list_models", {})),
    ];
    expect(allAgain).toBe(allText);
    expect(videoText).toMatch(/^\d+ models? of kind video;/);
    expect(videoText).not.toContain("sandbox-image-fast");
    expect(allText).toContain("sandbox-image-fast");
  });

  it("list_requests shows this key's records, filtered by state", async () => {
    h = await harness();
    const gen = structured<{ idempotencyKey: string; task: { id: string } }>(
      await h.call("generate_image", { model: "sandbox-image-fast", prompt: "fox", wait: 0 }),
    );
    // Refused by the service (a source image this key does not own): a closed record.
    await h.call("generate_image", {
      model: "sandbox-image-edit",
      prompt: "x",
      parameters: { sourceImage: "ast_not_owned" },
      wait: 0,
    });
    const all = structured<{ requests: { idempotencyKey: string; state: string; taskId?: string }[] }>(
      await h.call("list_requests", {}),
    );
    expect(all.requests.length).toBe(2);
    const ok = structured<{ requests: { idempotencyKey: string; taskId?: string; createdAt: string }[] }>(
      await h.call("list_requests", { state: "succeeded" }),
    );
    expect(ok.requests).toEqual([
      expect.objectContaining({
        idempotencyKey: gen.idempotencyKey,
        taskId: gen.task.id,
        tool: "generate_image",
      }),
    ]);
    expect(Date.parse(ok.requests[0]?.createdAt ?? "")).not.toBeNaN();
    const bad = await h.call("list_requests", { state: "lost" });
    expect(textOf(bad)).toMatch(/^INVALID_ARGUMENT: state: /);
  });

  it("list_requests under another key sees none of this key's records", async () => {
    h = await harness();
    structured(await h.call("generate_image", { model: "sandbox-image-fast", prompt: "fox", wait: 0 }));
    const otherKey = h.sandbox.addKey({ scopes: ["read", "generate"] });
    const client = new ServiceClient({
      baseUrl: BASE_URL,
      apiKey: otherKey,
      fetch: h.sandbox.handler as typeof fetch,
    });
    const server = createMcpServer({ ...h.engine, client, keyHash: hashKey(otherKey) });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const other = new Client({ name: "other", version: "1.0.0" });
    await other.connect(a);
    const r = (await other.callTool({ name: "list_requests", arguments: {} })) as CallToolResult;
    await checkOutput("list_requests", r);
    expect(structured<{ requests: unknown[] }>(r).requests).toEqual([]);
    expect(JSON.stringify(r)).not.toContain(otherKey);
    await other.close();
    await server.close();
    const mine = structured<{ requests: unknown[] }>(await h.call("list_requests", {}));
    expect(mine.requests.length).toBe(1);
  });

  it("resources give the catalog, a task afresh and an output's bytes", async () => {
    h = await harness();
    const models = await h.mcp.readResource({ uri: "generation://models" });
    expect(JSON.parse((models.contents[0] as { text: string }).text).models.length).toBeGreaterThan(0);
    const gen = structured<{ task: { id: string } }>(
      await h.call("generate_image", { model: "sandbox-image-fast", prompt: "fox", wait: 20 }),
    );
    const task = await h.mcp.readResource({ uri: `generation://tasks/${gen.task.id}` });
    expect(JSON.parse((task.contents[0] as { text: string }).text).task.status).toBe("succeeded");
    const out = await h.mcp.readResource({ uri: `generation://tasks/${gen.task.id}/outputs/0` });
    const blob = out.contents[0] as { blob: string; mimeType: string };
    expect(blob.mimeType).toBe("image/png");
    expect(Buffer.from(blob.blob, "base64").subarray(1, 4).toString()).toBe("PNG");
    await expect(h.mcp.readResource({ uri: `generation://tasks/${gen.task.id}/outputs/7` })).rejects.toThrow(
      /NOT_FOUND/,
    );
    await expect(h.mcp.readResource({ uri: "generation://tasks/task_missing" })).rejects.toThrow(/NOT_FOUND/);
    expect(JSON.stringify([models, task, out])).not.toMatch(/lgk_[0-9a-f]{64}/);
    const listed = await h.mcp.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain(`generation://tasks/${gen.task.id}`);
  });

  it("an output past the resource size limit is refused with a clear message", async () => {
    h = await harness();
    const gen = structured<{ task: { id: string } }>(
      await h.call("generate_image", { model: "sandbox-image-fast", prompt: "fox", wait: 20 }),
    );
    const server = new McpServer({ name: "small", version: "1.0.0" });
    registerResources(server, h.engine, { maxBytes: 100 });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const small = new Client({ name: "small", version: "1.0.0" });
    await small.connect(a);
    await expect(small.readResource({ uri: `generation://tasks/${gen.task.id}/outputs/0` })).rejects.toThrow(
      /OUTPUT_TOO_LARGE: output #0 of task \S+ could not be read inline \(limit 100 bytes\).*Next: call save_outputs/,
    );
    await small.close();
    await server.close();
  });
});
