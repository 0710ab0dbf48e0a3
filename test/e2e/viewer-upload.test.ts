/**
 * The media viewer's uploads through the built CLI (dist/cli.js) against the sandbox on loopback,
 * as a view's host sends them (the app-only tool viewer_upload): on stdio beside upload by path,
 * the chunks held in the ledger's store and staged on disk (a private directory, 0700) only while
 * the file is sent, the directory gone when the server exits; over HTTP with two keys, one user's upload invisible to the other and
 * each user's uploads bounded on their own. The asset made of chunks animates as any other.
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderImage } from "../../src/sandbox/media/png.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import { createSandbox, SANDBOX_API_KEY, type Sandbox } from "../../src/sandbox/sandbox.js";
import {
  APP_MIME_TYPE,
  APPS_EXTENSION,
  CLI,
  connectCli,
  isolatedEnv,
  type Started,
  startHttpCli,
} from "../helpers/cli.js";

const ASSETS = "POST /api/generate/assets";
const CHUNK = 512 * 1024;
const apps = { capabilities: { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } };

type Answer = { upload: string; state: string; asset?: { id: string; kind: string } };
const text = (r: CallToolResult) => r.content.map((c) => ("text" in c ? c.text : "")).join("\n");

async function call(client: Client, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name: "viewer_upload", arguments: args })) as CallToolResult;
}

async function open(client: Client, size: number): Promise<string> {
  const r = await call(client, { kind: "asset", size, name: "upload.wav" });
  expect(r.isError, text(r)).toBeFalsy();
  return (r.structuredContent as Answer).upload;
}

/** Sends every chunk of `bytes` as one upload; the last answer. */
async function upload(client: Client, bytes: Buffer): Promise<Answer> {
  const id = await open(client, bytes.byteLength);
  let last: CallToolResult | undefined;
  for (let seq = 0; seq * CHUNK < bytes.byteLength; seq++) {
    last = await call(client, {
      upload: id,
      seq,
      data: bytes.subarray(seq * CHUNK, (seq + 1) * CHUNK).toString("base64"),
    });
    expect(last.isError, text(last)).toBeFalsy();
  }
  return (last as CallToolResult).structuredContent as Answer;
}

let sandbox: Sandbox;
let baseUrl: string;
beforeAll(async () => {
  sandbox = createSandbox({ timeScale: 5 });
  baseUrl = (await sandbox.listen({ host: "127.0.0.1", port: 0 })).url;
});
afterAll(() => sandbox?.close());

describe("on stdio, beside upload by path", () => {
  it("takes the same file by path and in chunks, keeps the chunks in the ledger's store only, never on the temporary disk, and leaves nothing at exit", async () => {
    const iso = isolatedEnv({ GENERATION_BASE_URL: baseUrl, GENERATION_API_KEY: SANDBOX_API_KEY });
    const tmp = join(iso.dir, "tmp");
    mkdirSync(tmp);
    try {
      const { client } = await connectCli({ args: [CLI], env: { ...iso.env, TMPDIR: tmp }, apps: true });
      const png = renderImage("mine", "16:9");
      writeFileSync(join(iso.dir, "mine.png"), png);
      const before = sandbox.stats.requests(ASSETS);
      const byPath = (await client.callTool({
        name: "upload_asset",
        arguments: { path: "mine.png" },
      })) as CallToolResult;
      expect(byPath.isError, text(byPath)).toBeFalsy();

      const wav = renderAudio("chunks", 80);
      const id = await open(client, wav.byteLength);
      await call(client, { upload: id, seq: 0, data: wav.subarray(0, CHUNK).toString("base64") });
      // Mid-upload the chunk is in the ledger's store (any replica on it may take the next), not
      // on the server's temporary disk.
      const staged = () => readdirSync(tmp).flatMap((d) => readdirSync(join(tmp, d)));
      expect(staged()).toEqual([]);
      expect(sandbox.stats.requests(ASSETS)).toBe(before + 1);
      for (let seq = 1; seq * CHUNK < wav.byteLength; seq++) {
        await call(client, {
          upload: id,
          seq,
          data: wav.subarray(seq * CHUNK, (seq + 1) * CHUNK).toString("base64"),
        });
      }
      expect(sandbox.stats.requests(ASSETS)).toBe(before + 2);
      // Sent to the service straight from the store's chunks: nothing was written to the temporary
      // disk at any point, not even while it was sent.
      expect(readdirSync(tmp)).toEqual([]);

      // An asset made of chunks is an asset like any other: "now animate it".
      const asset = (await upload(client, png)).asset;
      sandbox.advance(1_000);
      const video = (await client.callTool({
        name: "generate_video",
        arguments: {
          model: "sandbox-video-lite",
          prompt: "animate it",
          parameters: { mode: "image-to-video", sourceImage: asset?.id },
          wait: 30,
        },
      })) as CallToolResult;
      expect(video.isError, text(video)).toBeFalsy();
      expect((video.structuredContent as { task: { status: string } }).task.status).toBe("succeeded");

      // An upload left half done holds nothing on the temporary disk; the directory goes at exit.
      const left = await open(client, wav.byteLength);
      await call(client, { upload: left, seq: 0, data: wav.subarray(0, CHUNK).toString("base64") });
      expect(staged()).toEqual([]);
      await client.close();
      await expect.poll(() => readdirSync(tmp)).toEqual([]);
    } finally {
      iso.cleanup();
    }
  }, 60_000);
});

describe("over HTTP, two users", () => {
  let server: Started;
  let iso: ReturnType<typeof isolatedEnv>;
  const clients: Client[] = [];
  const connect = async (key: string) => {
    const client = new Client({ name: "viewer-host", version: "1.0.0" }, apps);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    clients.push(client);
    return client;
  };
  beforeAll(async () => {
    iso = isolatedEnv({ GENERATION_BASE_URL: baseUrl });
    server = await startHttpCli([], iso.env);
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await server?.stop();
    iso?.cleanup();
  });

  it("keeps each user's upload their own: another key finds it no more than an ID never made", async () => {
    const alice = await connect(sandbox.addKey({}));
    const mallory = await connect(sandbox.addKey({}));
    const wav = renderAudio("alice's", 60);
    const id = await open(alice, wav.byteLength);
    const chunk0 = wav.subarray(0, CHUNK).toString("base64");
    const taken = await call(mallory, { upload: id, seq: 0, data: chunk0 });
    const madeUp = await call(mallory, { upload: "upl_AAAAAAAAAAAAAAAAAAAAAA", seq: 0, data: chunk0 });
    expect(taken.isError).toBe(true);
    expect(text(taken).replace(id, "ID")).toBe(text(madeUp).replace("upl_AAAAAAAAAAAAAAAAAAAAAA", "ID"));
    // Alice's upload is untouched by the attempt: her chunks go on from 0.
    const rest = await call(alice, { upload: id, seq: 0, data: chunk0 });
    expect((rest.structuredContent as { received: number }).received).toBe(CHUNK);
    const last = await call(alice, { upload: id, seq: 1, data: wav.subarray(CHUNK).toString("base64") });
    expect((last.structuredContent as Answer).asset?.kind).toBe("audio");
  });

  it("bounds each user's uploads in progress on their own", async () => {
    const bob = await connect(sandbox.addKey({}));
    const carol = await connect(sandbox.addKey({}));
    for (let i = 0; i < 3; i++) await open(bob, 20 * 1024 * 1024);
    const fourth = await call(bob, { kind: "asset", size: 1000 });
    expect(text(fourth)).toMatch(/^UPLOADS_BUSY: You have 3 uploads in progress \(the limit is 3 at once\)/);
    await open(carol, 20 * 1024 * 1024);
  });
});
