/**
 * Remote users and the server's files, through the built CLI over HTTP in key mode bound beyond
 * loopback (a non-loopback address of this machine, or 0.0.0.0 called over 127.0.0.1), against the
 * sandbox over loopback. Without GENERATION_FILES: a path names no file the server reads (access
 * times stay put, no upload reaches the service), no save writes anything, and every path, existing
 * or missing, gets the very same answer, which names no server directory. With GENERATION_FILES:
 * each key has a folder of its own there, and neither user can reach the other's.
 */
import { mkdir, readdir, readFile } from "node:fs/promises";
import { networkInterfaces } from "node:os";
import path from "node:path";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/ledger/identity.js";
import { renderImage } from "../../src/sandbox/media/png.js";
import { createSandbox, SANDBOX_API_KEY, type Sandbox } from "../../src/sandbox/sandbox.js";
import { isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";
import {
  expectPathsRefusedAlike,
  expectSavesRefused,
  plantServerFiles,
  textOf,
  treeOf,
} from "../helpers/remote-probe.js";
import { type TempDir, tempDir } from "../helpers/temp.js";

const ASSETS = "POST /api/generate/assets";
const VOICES = "POST /api/generate/voices";
const IMAGE = "POST /api/generate/image";

/** A non-loopback IPv4 address of this machine, or 0.0.0.0 (then reached over 127.0.0.1). */
function bindAddress(): string {
  const all = Object.values(networkInterfaces()).flat();
  return all.find((a) => a && a.family === "IPv4" && !a.internal)?.address ?? "0.0.0.0";
}

let sandbox: Sandbox;
let serviceUrl: string;
let closeService: () => Promise<void>;
beforeAll(async () => {
  sandbox = createSandbox({ timeScale: 20 });
  const listening = await sandbox.listen({ host: "127.0.0.1" });
  serviceUrl = listening.url;
  closeService = listening.close;
});
afterAll(async () => {
  await closeService?.();
  await sandbox?.close();
});

/** The CLI over HTTP bound beyond loopback; `files` sets GENERATION_FILES (else it is unset). */
async function startRemote(iso: { env: Record<string, string> }, files?: string): Promise<Started> {
  const { GENERATION_FILES: _unset, ...env } = iso.env;
  return startHttpCli(["--host", bindAddress()], {
    ...env,
    GENERATION_BASE_URL: serviceUrl,
    ...(files === undefined ? {} : { GENERATION_FILES: files }),
  });
}

const reachable = (url: string): string => url.replace("://0.0.0.0:", "://127.0.0.1:");

async function connect(server: Started, key: string): Promise<Client> {
  const client = new Client({ name: "remote-user", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(reachable(server.url)), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

describe("remote users without GENERATION_FILES (key mode beyond loopback, built CLI)", () => {
  let iso: ReturnType<typeof isolatedEnv>;
  let server: Started;
  let client: Client;
  let planted: Awaited<ReturnType<typeof plantServerFiles>>;
  beforeAll(async () => {
    iso = isolatedEnv();
    planted = await plantServerFiles(iso.dir);
    server = await startRemote(iso);
    client = await connect(server, SANDBOX_API_KEY);
  }, 30_000);
  afterAll(async () => {
    await client?.close();
    await server?.stop();
    iso?.cleanup();
  });

  it("says so at start, and neither the start message nor /healthz names a server path", async () => {
    expect(server.stdout()).toMatch(/files: none for remote users/);
    const health = await fetch(new URL("/healthz", reachable(server.url)));
    const body = await health.text();
    expect(health.status).toBe(200);
    for (const shown of [server.stdout(), body]) {
      expect(shown).not.toContain(iso.dir);
      expect(shown).not.toMatch(/generated|ledger\.sqlite/);
    }
  });

  it("answers every path alike, existing or missing, naming no server path, and reads no file", async () => {
    const uploads = () => sandbox.stats.requests(ASSETS) + sandbox.stats.requests(VOICES);
    const before = uploads();
    await expectPathsRefusedAlike((name, args) => call(client, name, args), planted, iso.dir);
    expect(uploads()).toBe(before);
  }, 60_000);

  it("refuses every save before anything is spent or written, saying how to take the results", async () => {
    const dispatched = sandbox.stats.dispatches(IMAGE);
    await expectSavesRefused((name, args) => call(client, name, args), iso.dir);
    // One generation: the one made to have outputs to save.
    expect(sandbox.stats.dispatches(IMAGE)).toBe(dispatched + 1);
  }, 60_000);

  it("still takes media by their bytes (base64 data, no mimeType needed)", async () => {
    const png = renderImage("brought by the user", "1:1").toString("base64");
    const r = await call(client, "upload_asset", { data: png });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(textOf(r)).toMatch(/^Uploaded asset /);
  });
});

describe("remote users with GENERATION_FILES set: a private folder per key (built CLI)", () => {
  let iso: ReturnType<typeof isolatedEnv>;
  let shared: TempDir;
  let server: Started;
  let alice: Client;
  let bob: Client;
  let bobKey: string;
  beforeAll(async () => {
    iso = isolatedEnv();
    shared = tempDir("gen-mcp-shared-");
    await mkdir(path.join(shared.dir, "media"));
    bobKey = sandbox.addKey({ scopes: ["read", "generate"] });
    server = await startRemote(iso, path.join(shared.dir, "media"));
    alice = await connect(server, SANDBOX_API_KEY);
    bob = await connect(server, bobKey);
  }, 30_000);
  afterAll(async () => {
    await alice?.close();
    await bob?.close();
    await server?.stop();
    shared?.cleanup();
    iso?.cleanup();
  });

  async function generateAndSave(client: Client): Promise<{ taskId: string; saved: string[]; text: string }> {
    const made = await call(client, "generate_image", {
      model: "sandbox-image-fast",
      prompt: "a heron",
      wait: 30,
    });
    const taskId = (made.structuredContent as { task: { id: string } }).task.id;
    const r = await call(client, "save_outputs", { taskId });
    expect(r.isError, textOf(r)).toBeFalsy();
    return { taskId, saved: (r.structuredContent as { saved: string[] }).saved, text: textOf(r) };
  }

  it("saves each user's outputs in their own folder, named relative to it, and lets only them read them back", async () => {
    const media = path.join(shared.dir, "media");
    expect(server.stdout()).toMatch(/files: each user \(key\) has a private folder/);
    const a = await generateAndSave(alice);
    const b = await generateAndSave(bob);
    expect(a.saved).toEqual([`generated/${a.taskId}-0.png`]);
    expect(b.saved).toEqual([`generated/${b.taskId}-0.png`]);
    for (const text of [a.text, b.text]) expect(text).not.toContain(shared.dir);
    // On disk: two folders, each holding only its own user's file.
    const aliceDir = path.join(media, hashKey(SANDBOX_API_KEY).slice(0, 32));
    const bobDir = path.join(media, hashKey(bobKey).slice(0, 32));
    expect((await readdir(media)).sort()).toEqual([path.basename(aliceDir), path.basename(bobDir)].sort());
    expect(await treeOf(aliceDir)).toEqual(["generated", `generated/${a.taskId}-0.png`]);
    expect(await treeOf(bobDir)).toEqual(["generated", `generated/${b.taskId}-0.png`]);
    // Alice uploads her own saved file back by the name she was given.
    const own = await call(alice, "upload_asset", { path: a.saved[0] });
    expect(own.isError, textOf(own)).toBeFalsy();
    // Bob reaches none of Alice's files, by her name, by climbing out, or by the server's path.
    const aliceFile = path.join(aliceDir, "generated", `${a.taskId}-0.png`);
    const bytes = await readFile(aliceFile);
    const tries = [
      a.saved[0] as string,
      `../${path.basename(aliceDir)}/${a.saved[0]}`,
      aliceFile,
      `~/${a.saved[0]}`,
    ];
    for (const p of tries) {
      const r = await call(bob, "upload_asset", { path: p });
      expect(r.isError, p).toBe(true);
      expect(textOf(r), p).toMatch(/^INVALID_ARGUMENT: path: /);
      // Beyond the path Bob typed himself, the answer names nothing of the server's.
      const answer = textOf(r).replaceAll(p, "<path>");
      expect(answer, p).not.toContain(shared.dir);
      expect(answer, p).not.toContain(path.basename(aliceDir));
    }
    expect(await readFile(aliceFile)).toEqual(bytes);
  }, 90_000);
});
