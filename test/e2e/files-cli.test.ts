/**
 * The path race through what users run: the built CLI over stdio, uploading from a directory
 * that is swapped for a link to an outside directory and back, against the sandbox over real
 * loopback HTTP. Every body the service received is recorded; none may hold the outside bytes.
 * Then uploads typed by their bytes, and a save_outputs whose directory cannot be written.
 */

import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderImage } from "../../src/sandbox/media/png.js";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { CLI, connectCli, isolatedEnv } from "../helpers/cli.js";
import { textOf } from "../helpers/remote-probe.js";
import { swapDirectory } from "../helpers/swapper.js";
import { type TempDir, tempDir } from "../helpers/temp.js";

const CALLS = 600;
const MAX_MS = 10_000;

let sandbox: Sandbox;
let server: Server;
let serviceUrl: string;
/** The body of every upload the service received. */
const received: Buffer[] = [];

beforeAll(async () => {
  sandbox = createSandbox();
  // A recording front for the sandbox: what reached the service, byte for byte.
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks);
      if (req.method === "POST" && req.url?.startsWith("/api/generate/assets")) received.push(body);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const answer = await sandbox.fetch(
        new Request(`${serviceUrl}${req.url}`, {
          method: req.method ?? "GET",
          headers,
          ...(hasBody ? { body } : {}),
        }),
      );
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  serviceUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await sandbox?.close();
});

describe("upload_asset under a racing swap (built CLI)", () => {
  it("never sends an outside file's bytes, and answers every call with an asset or INVALID_ARGUMENT", async () => {
    const key = sandbox.addKey({ scopes: ["read", "generate"] });
    const iso = isolatedEnv({ GENERATION_BASE_URL: serviceUrl, GENERATION_API_KEY: key });
    const away: TempDir = tempDir("gen-mcp-outside-");
    const inside = renderImage("inside", "1:1");
    const secret = renderImage("secret", "16:9");
    await mkdir(path.join(iso.dir, "d"));
    await writeFile(path.join(iso.dir, "d", "pic.png"), inside);
    await writeFile(path.join(away.dir, "pic.png"), secret);
    const { client } = await connectCli({ args: [CLI], env: iso.env, name: "path-race" });
    const answers = { uploaded: 0, refused: 0, other: [] as string[] };
    const swapper = swapDirectory(path.join(iso.dir, "d"), away.dir, MAX_MS);
    const started = Date.now();
    try {
      for (let i = 0; i < CALLS && Date.now() - started < MAX_MS; i++) {
        const r = (await client.callTool({
          name: "upload_asset",
          arguments: { path: path.join(iso.dir, "d", "pic.png") },
        })) as CallToolResult;
        const text = r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
        if (!r.isError) answers.uploaded++;
        else if (text.startsWith("INVALID_ARGUMENT: path: ")) answers.refused++;
        else answers.other.push(text);
      }
      // The swap over, the directory is back: the same call uploads (on a loaded machine every
      // raced call may have met the link, so this is what shows uploads still go through).
      await swapper.stop();
      const after = (await client.callTool({
        name: "upload_asset",
        arguments: { path: path.join(iso.dir, "d", "pic.png") },
      })) as CallToolResult;
      if (!after.isError) answers.uploaded++;
    } finally {
      await swapper.stop();
      await client.close();
      iso.cleanup();
      away.cleanup();
    }
    expect(received.filter((b) => b.equals(secret)).length, JSON.stringify(answers)).toBe(0);
    expect(answers.other).toEqual([]);
    expect(received.every((b) => b.equals(inside))).toBe(true);
    expect(received.length).toBe(answers.uploaded);
    expect(answers.uploaded).toBeGreaterThan(0);
  }, 60_000);
});

describe("uploads by their bytes and saves that cannot be written (built CLI over stdio)", () => {
  it("upload_asset takes data without mimeType, and refuses a mimeType the bytes contradict, naming both", async () => {
    const iso = isolatedEnv();
    const { client } = await connectCli({ args: [CLI, "--sandbox"], env: iso.env, name: "bytes-host" });
    try {
      const png = renderImage("typed by its bytes", "1:1").toString("base64");
      const call = async (args: Record<string, unknown>) =>
        (await client.callTool({ name: "upload_asset", arguments: args })) as CallToolResult;
      const plain = await call({ data: png });
      expect(plain.isError, textOf(plain)).toBeFalsy();
      expect((plain.structuredContent as { asset: { kind: string } }).asset.kind).toBe("image");
      // A name of the same format agrees; another format is refused before anything is sent.
      expect((await call({ data: png, mimeType: "image/png" })).isError).toBeFalsy();
      const wrong = await call({ data: png, mimeType: "image/jpeg" });
      expect(wrong.isError).toBe(true);
      expect(textOf(wrong)).toMatch(
        /^INVALID_ARGUMENT: mimeType: says image\/jpeg but the bytes are image\/png/,
      );
      const family = await call({ data: png, mimeType: "video/mp4" });
      expect(textOf(family)).toMatch(
        /^INVALID_ARGUMENT: mimeType: says video\/mp4 but the bytes are image\/png/,
      );
    } finally {
      await client.close();
      iso.cleanup();
    }
  }, 30_000);

  it("save_outputs that cannot write is an error saying the outputs were generated, charged and remain downloadable", async () => {
    const iso = isolatedEnv();
    // A regular file where the output directory should be: no directory can be made there.
    await writeFile(path.join(iso.dir, "blocker"), "not a directory");
    const env = { ...iso.env, GENERATION_OUTPUT_DIR: path.join(iso.dir, "blocker", "out") };
    const { client } = await connectCli({ args: [CLI, "--sandbox"], env, name: "unwritable-host" });
    try {
      const made = (await client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt: "a lark", wait: 30 },
      })) as CallToolResult;
      const taskId = (made.structuredContent as { task: { id: string } }).task.id;
      const r = (await client.callTool({ name: "save_outputs", arguments: { taskId } })) as CallToolResult;
      expect(r.isError).toBe(true);
      const text = textOf(r);
      expect(text).toMatch(new RegExp(`^SAVE_FAILED: 1 output of task ${taskId} could not be written`));
      expect(text).toMatch(/Output #0 not saved: /);
      expect(text).toMatch(
        new RegExp(
          `Task ${taskId} has succeeded: its outputs were generated and its Gems charged \\(\\d+\\); they remain downloadable`,
        ),
      );
      expect(text).toMatch(/#0 https?:\/\/\S+/);
      expect(text).not.toMatch(/no downloadable outputs|not downloadable/);
    } finally {
      await client.close();
      iso.cleanup();
    }
  }, 60_000);
});
