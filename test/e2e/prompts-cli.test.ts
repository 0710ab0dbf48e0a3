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

it("serves prompts and completions over stdio", async () => {
  const client = new Client({ name: "cli-prompts-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "--sandbox"],
      env: iso.env,
      stderr: "pipe",
    }),
  );
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
