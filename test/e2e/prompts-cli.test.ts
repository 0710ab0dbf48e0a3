/**
 * Prompts and completions from the built CLI over stdio, as a host spawns it (--sandbox):
 * prompts/list, prompts/get and completion/complete for a prompt argument and a task ID.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, expect, it } from "vitest";
import { CLI, isolatedEnv } from "../helpers/cli.js";

const iso = isolatedEnv();
afterAll(() => iso.cleanup());

/** A client of the built CLI (--sandbox) over stdio, as a host spawns it. */
async function connect(name: string): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "--sandbox"],
      env: iso.env,
      stderr: "pipe",
    }),
  );
  return client;
}

it("serves prompts and completions over stdio", async () => {
  const client = await connect("cli-prompts-test");
  try {
    expect(client.getServerCapabilities()?.completions).toBeDefined();
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(["recover_lost_work", "storyboard", "voice_over"]);
    const got = await client.getPrompt({
      name: "storyboard",
      arguments: { scene: "A kite over a beach.", shots: "2" },
    });
    expect(JSON.stringify(got.messages)).toContain("2-shot storyboard");
    const models = await client.complete({
      ref: { type: "ref/prompt", name: "storyboard" },
      argument: { name: "imageModel", value: "sandbox-image-p" },
    });
    expect(models.completion.values).toEqual(["sandbox-image-pro"]);

    const r = await client.callTool({
      name: "generate_image",
      arguments: { model: "sandbox-image-fast", prompt: "a kite", wait: 0 },
    });
    const taskId = (r.structuredContent as { task: { id: string } }).task.id;
    const ids = await client.complete({
      ref: { type: "ref/resource", uri: "generation://tasks/{taskId}" },
      argument: { name: "taskId", value: "" },
    });
    expect(ids.completion.values).toEqual([taskId]);
  } finally {
    await client.close();
  }
}, 30_000);

it("completes voiceId from every page of voices, with the true total", async () => {
  const client = await connect("cli-voices-test");
  try {
    // Every public voice, page by page, as list_voices gives them.
    const all: string[] = [];
    for (let page = 1; page < 10; page++) {
      const r = await client.callTool({ name: "list_voices", arguments: { scope: "explore", page } });
      const voices = (r.structuredContent as { voices: { id: string }[] }).voices;
      all.push(...voices.map((v) => v.id));
      if (voices.length === 0 || !JSON.stringify(r.content).includes("More: call list_voices")) break;
    }
    expect(all.length).toBeGreaterThan(100);
    const ref = { type: "ref/prompt" as const, name: "voice_over" };
    const every = await client.complete({ ref, argument: { name: "voiceId", value: "" } });
    expect(every.completion.total).toBe(all.length);
    expect(every.completion.hasMore).toBe(true);
    expect(every.completion.values).toHaveLength(100);
    // A voice on the last page is offered too.
    const last = all.at(-1) ?? "";
    const one = await client.complete({ ref, argument: { name: "voiceId", value: last } });
    expect(one.completion.values).toEqual([last]);
  } finally {
    await client.close();
  }
});
