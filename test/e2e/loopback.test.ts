/**
 * The shipped bundle (`dist/cli.js`) as users run it: on stdio, against a service over real
 * loopback HTTP (`generation-mcp sandbox --port 0`, or a recording server), not the in-process
 * sandbox's fetch path, which hid a doubled Content-Length from undici.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderVideo } from "../../src/sandbox/media/mp4.js";
import { renderImage } from "../../src/sandbox/media/png.js";
import { CLI, type ConnectedCli, connectCli, isolatedEnv } from "../helpers/cli.js";

const iso = isolatedEnv();
afterAll(() => iso.cleanup());

type Result = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: unknown };
const textOf = (r: Result) => r.content.map((c) => c.text ?? "").join("\n");

/** `generation-mcp sandbox --port 0`: resolves with the URL and key it prints. */
function startSandbox(): Promise<{ child: ChildProcessWithoutNullStreams; url: string; key: string }> {
  const child = spawn(process.execPath, [CLI, "sandbox", "--port", "0"], { env: iso.env });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`sandbox printed no URL: ${out}`)), 20_000);
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const url = /^GENERATION_BASE_URL=(\S+)$/m.exec(out)?.[1];
      const key = /^GENERATION_API_KEY=(\S+)/m.exec(out)?.[1];
      if (url && key) {
        clearTimeout(timer);
        resolve({ child, url, key });
      }
    });
    child.on("exit", (code) => reject(new Error(`sandbox exited with ${code}: ${out}`)));
  });
}

const connect = (env: Record<string, string>): Promise<ConnectedCli> =>
  connectCli({ args: [CLI], env: { ...iso.env, ...env }, name: "loopback-test" });

describe("the bundled CLI against `generation-mcp sandbox` over loopback HTTP", () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(() => {
    sandbox.child.kill("SIGTERM");
  });

  it("uploads base64 data, and analyses a video that has no audio track", async () => {
    const { client, stderr } = await connect({
      GENERATION_BASE_URL: sandbox.url,
      GENERATION_API_KEY: sandbox.key,
    });
    try {
      const png = renderImage("an upload over loopback", "1:1");
      const image = (await client.callTool({
        name: "upload_asset",
        arguments: { data: png.toString("base64"), mimeType: "image/png", filename: "loopback.png" },
      })) as Result;
      expect(image.isError, textOf(image)).toBeFalsy();
      expect(image.structuredContent).toMatchObject({ asset: { kind: "image", id: expect.any(String) } });

      // A file is streamed from disk with its length stated: that path must keep working too.
      const file = join(iso.dir, "streamed.png");
      writeFileSync(file, png);
      const streamed = (await client.callTool({ name: "upload_asset", arguments: { path: file } })) as Result;
      expect(streamed.isError, textOf(streamed)).toBeFalsy();
      expect(streamed.structuredContent).toMatchObject({ asset: { kind: "image" } });

      const mp4 = renderVideo("a silent clip", 4, "16:9", { audio: false });
      const video = (await client.callTool({
        name: "upload_asset",
        arguments: { data: mp4.toString("base64"), mimeType: "video/mp4" },
      })) as Result;
      expect(video.isError, textOf(video)).toBeFalsy();
      const { id } = (video.structuredContent as { asset: { id: string } }).asset;
      // An upload is `processing` for a second of sandbox time before it can be analysed.
      await new Promise((r) => setTimeout(r, 1_500));
      const analysis = (await client.callTool({
        name: "extract_video",
        arguments: { videoAssetId: id, prompt: "what happens?" },
      })) as Result;
      expect(analysis.isError, textOf(analysis)).toBeFalsy();
      expect(analysis.structuredContent).toMatchObject({ extraction: { durationSeconds: 4 } });
    } finally {
      await client.close();
    }
    expect(stderr()).not.toContain(sandbox.key.slice(4));
  });
});

describe("the bundled CLI refuses task IDs that would steer the request path", () => {
  let server: Server;
  const requests: string[] = [];
  let url = "";
  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "NOT_FOUND", message: "nothing here" } }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("poll_task and the task resources answer INVALID_ARGUMENT naming taskId, and send nothing", async () => {
    const key = `lgk_${"0123456789abcdef".repeat(4)}`;
    const { client } = await connect({ GENERATION_BASE_URL: url, GENERATION_API_KEY: key });
    try {
      for (const taskId of ["..", ".", "a/b", "../models"]) {
        const r = (await client.callTool({ name: "poll_task", arguments: { taskId } })) as Result;
        expect(r.isError).toBe(true);
        expect(textOf(r)).toMatch(/^INVALID_ARGUMENT: taskId: /);
      }
      await expect(client.readResource({ uri: "generation://tasks/a%2Fb" })).rejects.toThrow(
        /INVALID_ARGUMENT: taskId/,
      );
      // A well-formed ID does reach the service: the server above is really being asked.
      const ok = (await client.callTool({ name: "poll_task", arguments: { taskId: "task_1" } })) as Result;
      expect(textOf(ok)).toMatch(/^NOT_FOUND/);
    } finally {
      await client.close();
    }
    expect(requests).toEqual(["GET /api/generate/tasks/task_1"]);
  });
});
