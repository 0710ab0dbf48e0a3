/**
 * Results a host's model can act on when it is shown only structuredContent (Claude Code), through
 * the built CLI over stdio and Streamable HTTP against a sandbox on loopback: every tool's answer
 * carries `next` beside its IDs, a failed generation is `isError` with its task kept, a wait longer
 * than one call is held and said so, and the tools linked to the viewer carry both forms of the link.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_WAIT_CAP_SECONDS } from "../../src/config/time-limits.js";
import { renderImage } from "../../src/sandbox/media/png.js";
import { SANDBOX_MARKERS } from "../../src/sandbox/tasks.js";
import { CLI, connectCli, type Started, startHttpCli } from "../helpers/cli.js";
import { type LoopbackSandbox, loopbackSandbox } from "../helpers/loopback-sandbox.js";

type Result = Awaited<ReturnType<Client["callTool"]>>;
const textOf = (r: Result): string =>
  (r.content as { type: string; text?: string }[]).find((c) => c.type === "text")?.text ?? "";
const nextOf = (r: Result): unknown => (r.structuredContent as { next?: unknown } | undefined)?.next;

let loopback: LoopbackSandbox;
let http: Started;

beforeAll(async () => {
  // Sandbox time 20 times faster: an image takes a fraction of a second, a slow one about 3 s.
  loopback = await loopbackSandbox({ timeScale: 20 });
  http = await startHttpCli([], loopback.envOf("next-http"));
});

afterAll(async () => {
  await http?.stop();
  await loopback.stop();
});

/** A success of each tool a client without the viewer can call, with `next` checked on each. */
async function everyTool(client: Client): Promise<Record<string, Result>> {
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args }, { timeout: 60_000 });
    expect(r.isError ?? false, `${name}: ${textOf(r)}`).toBe(false);
    const next = nextOf(r);
    expect(typeof next === "string" && next.length > 10, `${name}: structuredContent.next`).toBe(true);
    expect(textOf(r), name).toContain(`Next: ${next}`);
    return r;
  };
  const out: Record<string, Result> = {};
  out.list_models = await call("list_models", {});
  out.list_voices = await call("list_voices", { scope: "explore" });
  const voice = (out.list_voices.structuredContent as { voices: { id: string }[] }).voices[0]?.id;
  const image = renderImage("kite", "1:1").toString("base64");
  out.upload_asset = await call("upload_asset", { data: image, mimeType: "image/png" });
  out.generate_image = await call("generate_image", {
    model: "sandbox-image-fast",
    prompt: "a kite",
    wait: 20,
  });
  const taskId = (out.generate_image.structuredContent as { task: { id: string } }).task.id;
  out.poll_task = await call("poll_task", { taskId });
  out.generate_audio = await call("generate_audio", {
    model: "service-voice",
    operation: "speech",
    prompt: "Hello there",
    parameters: { voiceProfileId: voice },
    wait: 20,
  });
  out.generate_video = await call("generate_video", {
    model: "sandbox-video-lite",
    prompt: "waves",
    parameters: { mode: "text-to-video", duration: 5, ratio: "16:9" },
    wait: 0,
  });
  out.chat = await call("chat", {
    model: "sandbox-chat-small",
    messages: [{ role: "user", content: "Say hello." }],
  });
  out.list_requests = await call("list_requests", {});
  return out;
}

describe("structuredContent.next through the built CLI", () => {
  it("over stdio: every tool's answer carries next, and a running task's names poll_task with its ID", async () => {
    const { client } = await connectCli({ args: [CLI], env: loopback.envOf("next-stdio") });
    try {
      const out = await everyTool(client);
      const video = out.generate_video?.structuredContent as {
        task: { id: string; status: string };
        next: string;
      };
      expect(["queued", "processing"]).toContain(video.task.status);
      expect(video.next).toContain(`call poll_task with {"taskId": "${video.task.id}"`);
      expect(nextOf(out.generate_image as Result)).toMatch(/give the user the URLs/);
    } finally {
      await client.close();
    }
  });

  it("over HTTP: every tool's answer carries next; a failed generation is an error with its task; a long wait is held", async () => {
    const client = new Client({ name: "next-http", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(http.url), {
        requestInit: { headers: { authorization: `Bearer ${loopback.key}` } },
      }),
    );
    try {
      await everyTool(client);
      const failed = await client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt: `a kite ${SANDBOX_MARKERS.fail}`, wait: 20 },
      });
      expect(failed.isError).toBe(true);
      const sc = failed.structuredContent as {
        idempotencyKey: string;
        task: { status: string };
        next: string;
      };
      expect(sc.task.status).toBe("failed");
      expect(sc.idempotencyKey).toMatch(/^gm-/);
      expect(sc.next).toMatch(/^stop polling and tell the user why/);
      const long = await client.callTool(
        { name: "poll_task", arguments: { taskId: "task_doesnotexist0000", wait: 600 } },
        { timeout: 60_000 },
      );
      // Refused at once (no such task), never held for 600 s.
      expect(long.isError).toBe(true);
      const started = Date.now();
      const held = await client.callTool(
        {
          name: "generate_image",
          arguments: { model: "sandbox-image-fast", prompt: `a harbour ${SANDBOX_MARKERS.slow}`, wait: 90 },
        },
        { timeout: 70_000 },
      );
      expect(Date.now() - started).toBeLessThan(58_000);
      expect(textOf(held)).toContain(`wait 90 s was held to ${DEFAULT_WAIT_CAP_SECONDS} s`);
    } finally {
      await client.close();
    }
  }, 90_000);

  it("lists both forms of the viewer link on every tool linked to it", async () => {
    const { client } = await connectCli({ args: [CLI], env: loopback.envOf("next-links"), apps: true });
    try {
      const { tools } = await client.listTools();
      const linked = tools.filter((t) => (t._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri);
      expect(linked.length).toBeGreaterThanOrEqual(5);
      for (const t of linked) expect(t._meta?.["ui/resourceUri"], t.name).toBe("ui://generation/viewer");
    } finally {
      await client.close();
    }
  });
});
