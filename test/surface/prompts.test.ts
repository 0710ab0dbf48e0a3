/**
 * Completions and prompts through a real MCP client (in-process, over the SDK's linked
 * transport, and once over the 2026-07-28 HTTP entry): completion/complete for the task
 * resources and prompt arguments, prompts/list and prompts/get with the costs stated.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, harness, structured } from "../tools/harness.js";

let h: Harness;
fakeTimeEach();
afterEach(async () => {
  await h?.close();
});

/** The text of a prompt's single message. */
function promptText(r: { messages: Array<{ content: { type: string } }> }): string {
  const c = r.messages[0]?.content as { type: string; text?: string } | undefined;
  if (c?.type !== "text" || c.text === undefined) throw new Error("the prompt has no text message");
  return c.text;
}

const TASK = "generation://tasks/{taskId}";
const OUTPUT = "generation://tasks/{taskId}/outputs/{index}";

async function complete(
  ref: { type: "ref/resource"; uri: string } | { type: "ref/prompt"; name: string },
  name: string,
  value: string,
  context?: Record<string, string>,
): Promise<string[]> {
  const r = await h.mcp.complete({
    ref,
    argument: { name, value },
    ...(context ? { context: { arguments: context } } : {}),
  });
  return r.completion.values;
}

async function image(prompt: string, outputCount = 1): Promise<string> {
  const r = (await h.call("generate_image", {
    model: "sandbox-image-fast",
    prompt,
    parameters: { outputCount },
    wait: 20,
  })) as CallToolResult;
  return structured<{ task: { id: string } }>(r).task.id;
}

describe("completions", () => {
  it("declares the capability", async () => {
    h = await harness();
    expect(h.mcp.getServerCapabilities()?.completions).toBeDefined();
    expect(h.mcp.getServerCapabilities()?.prompts).toBeDefined();
  });

  it("completes task IDs from this key's ledger, newest first, and output indexes from the task", async () => {
    h = await harness();
    const first = await image("a red fox");
    const second = await image("a blue heron", 3);
    expect(await complete({ type: "ref/resource", uri: TASK }, "taskId", "")).toEqual([second, first]);
    expect(await complete({ type: "ref/resource", uri: OUTPUT }, "taskId", second.slice(0, 8))).toContain(
      second,
    );
    expect(await complete({ type: "ref/resource", uri: TASK }, "taskId", "nothing-like-it")).toEqual([]);
    expect(await complete({ type: "ref/resource", uri: OUTPUT }, "index", "", { taskId: second })).toEqual([
      "0",
      "1",
      "2",
    ]);
    expect(await complete({ type: "ref/resource", uri: OUTPUT }, "index", "2", { taskId: second })).toEqual([
      "2",
    ]);
    // An unknown task completes to nothing rather than failing the host's typing.
    expect(
      await complete({ type: "ref/resource", uri: OUTPUT }, "index", "", { taskId: "task_nope" }),
    ).toEqual([]);
  });

  it("another key sees none of these tasks", async () => {
    h = await harness();
    await image("a red fox");
    const other = await harness({ apiKey: h.sandbox.addKey({}) });
    try {
      const r = await other.mcp.complete({
        ref: { type: "ref/resource", uri: TASK },
        argument: { name: "taskId", value: "" },
      });
      expect(r.completion.values).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it("completes prompt arguments from the catalog: model IDs of the right kind, voice IDs", async () => {
    h = await harness();
    const ref = { type: "ref/prompt" as const, name: "storyboard" };
    const images = await complete(ref, "imageModel", "sandbox-image");
    expect(images).toContain("sandbox-image-fast");
    expect(images).not.toContain("sandbox-image-legacy"); // available: false
    expect(images.every((id) => id.startsWith("sandbox-image"))).toBe(true);
    const videos = await complete(ref, "videoModel", "");
    expect(videos).toEqual(["sandbox-video-lite", "sandbox-video-pro"]);
    const voices = await complete({ type: "ref/prompt", name: "voice_over" }, "voiceId", "voice_en");
    expect(voices.length).toBeGreaterThan(0);
    expect(voices.every((id) => id.startsWith("voice_en"))).toBe(true);
  });
});

describe("prompts", () => {
  it("lists the storyboard, voice-over and recovery prompts with their arguments", async () => {
    h = await harness();
    const { prompts } = await h.mcp.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(["recover_lost_work", "storyboard", "voice_over"]);
    const board = prompts.find((p) => p.name === "storyboard");
    expect(board?.arguments?.map((a) => [a.name, a.required ?? false])).toEqual([
      ["scene", true],
      ["shots", false],
      ["imageModel", false],
      ["videoModel", false],
    ]);
  });

  it("storyboard states the keyframes' cost from baseGems and that video is quoted at submission", async () => {
    h = await harness();
    const r = await h.mcp.getPrompt({
      name: "storyboard",
      arguments: {
        scene: "A lighthouse keeper climbs the stairs at dusk.",
        shots: "3",
        imageModel: "sandbox-image-pro",
      },
    });
    const text = promptText(r);
    expect(text).toContain("3-shot storyboard");
    expect(text).toContain("3 keyframes with sandbox-image-pro cost about 24 Gems (8 each");
    expect(text).toMatch(/video.*quoted only at submission/);
    expect(text).toMatch(/before spending/);
    expect(text).toContain('"mode": "image-to-video"');
    // Without a model it prices every available image model.
    const any = await h.mcp.getPrompt({ name: "storyboard", arguments: { scene: "x" } });
    expect(promptText(any)).toContain("sandbox-image-fast about 8 Gems");
    // Nothing was spent by asking.
    expect(h.sandbox.stats.dispatches()).toBe(0);
  });

  it("storyboard refuses a shot count outside 1 to 12, naming the field", async () => {
    h = await harness();
    await expect(
      h.mcp.getPrompt({ name: "storyboard", arguments: { scene: "x", shots: "40" } }),
    ).rejects.toThrow(/shots/);
  });

  it("voice-over splits a long script at the speech limit and says audio is quoted at submission", async () => {
    h = await harness();
    const script = "One sentence of the script. ".repeat(100); // 2,800 characters
    const r = await h.mcp.getPrompt({ name: "voice_over", arguments: { script, voiceId: "voice_en_01" } });
    const text = promptText(r);
    expect(text).toContain("2 speech requests to service-voice");
    expect(text).toContain("quoted only at submission");
    expect(text).toContain("Use voice voice_en_01.");
    expect(text).toContain('"operation": "speech"');
  });

  it("recovering lost work lists the ledger's open requests and says it costs nothing new", async () => {
    h = await harness();
    const open = await h.ledger.run(
      {
        keyHash: h.engine.keyHash,
        tool: "generate_image",
        endpoint: "/api/generate/image",
        bytes: "{}",
        model: "sandbox-image-fast",
      },
      async () => ({ id: "task_lost" }),
      (r) => ({ taskId: r.id }),
    );
    // Delivered, and never seen finish: its first answer reached a conversation that may be gone.
    const running = await h.ledger.run(
      { keyHash: h.engine.keyHash, tool: "generate_video", endpoint: "/api/generate/video", bytes: "{}" },
      async () => ({ id: "task_video" }),
      (r) => ({ taskId: r.id }),
    );
    await h.ledger.markDelivered(h.engine.keyHash, running.identity, true);
    await h.ledger.noteStatus(h.engine.keyHash, "task_video", {
      status: "processing",
      at: Date.parse("2026-01-02T03:04:05Z"),
    });
    // Delivered and seen finished: nothing to pick up.
    const done = await h.ledger.run(
      { keyHash: h.engine.keyHash, tool: "generate_image", endpoint: "/api/generate/image", bytes: "[]" },
      async () => ({ id: "task_done" }),
      (r) => ({ taskId: r.id }),
    );
    await h.ledger.markDelivered(h.engine.keyHash, done.identity, true);
    await h.ledger.noteStatus(h.engine.keyHash, "task_done", { status: "succeeded", at: Date.now() });
    const r = await h.mcp.getPrompt({ name: "recover_lost_work", arguments: {} });
    const text = promptText(r);
    expect(text).toContain("2 requests to pick up");
    expect(text).toContain(
      `- ${open.identity}: generate_image sandbox-image-fast, accepted by the service: task task_lost, status not read since submission; result not delivered: the same call replays it`,
    );
    expect(text).toContain("list_requests and poll_task are free");
    expect(text).toContain("Repeating a call whose result did arrive is new work and is charged again");
    expect(text).toContain(
      `- ${running.identity}: generate_video, accepted by the service: task task_video, processing when last read (2026-01-02T03:04:05.000Z)`,
    );
    expect(text).not.toContain("task_done");
    expect(text).toMatch(/poll_task with it; once terminal/);
    expect(text).toContain("list_requests");
    const one = await h.mcp.getPrompt({ name: "recover_lost_work", arguments: { taskId: "task_lost" } });
    expect(promptText(one)).toContain('poll_task with {"taskId": "task_lost"');
    expect(await complete({ type: "ref/prompt", name: "recover_lost_work" }, "taskId", "task_l")).toEqual([
      "task_lost",
    ]);
  });

  it("works over the 2026-07-28 revision too", async () => {
    h = await harness({ modern: true });
    const { prompts } = await h.mcp.listPrompts();
    expect(prompts).toHaveLength(3);
    expect(
      await complete({ type: "ref/prompt", name: "storyboard" }, "videoModel", "sandbox-video-p"),
    ).toEqual(["sandbox-video-pro"]);
  });
});
