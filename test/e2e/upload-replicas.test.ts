/**
 * A media viewer upload across replicas (issue 33): two processes of the built CLI (dist/cli.js,
 * `--transport http`) on one ledger store, a SQLite file, PostgreSQL and Redis, each client on the
 * sessionless 2026-07-28 wire, against the sandbox on loopback. The upload is opened on one, its
 * chunks alternate between the two, one chunk is resent to the other replica, and the last one's
 * answer is the asset, sent to the service once; the bounds are the deployment's, not each
 * replica's.
 */
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { APP_MIME_TYPE, APPS_EXTENSION, isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";
import { available, freshStore, type StoreFixture } from "../ledger/stores.js";

const ASSETS = "POST /api/generate/assets";
const CHUNK = 512 * 1024;
type Answer = { upload: string; state: string; received?: number; asset?: { id: string; kind: string } };
const text = (r: CallToolResult) => r.content.map((c) => ("text" in c ? c.text : "")).join("\n");

let sandbox: Sandbox;
let baseUrl: string;
beforeAll(async () => {
  sandbox = createSandbox({ timeScale: 5 });
  baseUrl = (await sandbox.listen({ host: "127.0.0.1", port: 0 })).url;
});
afterAll(() => sandbox?.close());

describe.each(["sqlite", "postgres", "redis"] as const)("two replicas on one %s store", (kind) => {
  let store: StoreFixture | undefined;
  const servers: Started[] = [];
  const clients: Client[] = [];
  const envs: Array<ReturnType<typeof isolatedEnv>> = [];
  beforeAll(async () => {
    if (!(await available(kind))) return;
    store = await freshStore(kind);
    for (let i = 0; i < 2; i++) {
      const iso = isolatedEnv({ GENERATION_BASE_URL: baseUrl, GENERATION_STORE: store.uri });
      envs.push(iso);
      servers.push(await startHttpCli([], iso.env));
    }
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    for (const s of servers) await s.stop();
    for (const e of envs) e.cleanup();
    await store?.cleanup();
  });

  /** One view's host, on the sessionless wire, to replica `i` with `key`. */
  async function connect(i: number, key: string): Promise<Client> {
    const client = new Client(
      { name: "viewer-host", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        capabilities: { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } },
      },
    );
    const server = servers[i] as Started;
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    clients.push(client);
    return client;
  }
  const call = async (client: Client, args: Record<string, unknown>) =>
    (await client.callTool({ name: "viewer_upload", arguments: args })) as CallToolResult;
  const ok = (r: CallToolResult): Answer => {
    expect(r.isError, text(r)).toBeFalsy();
    return r.structuredContent as Answer;
  };

  it("completes an upload whose chunks alternate between the replicas, sent to the service once", async (ctx) => {
    if (store === undefined) return ctx.skip();
    const key = sandbox.addKey({});
    const [a, b] = [await connect(0, key), await connect(1, key)];
    const wav = renderAudio("two replicas", 120);
    const count = Math.ceil(wav.byteLength / CHUNK);
    expect(count).toBeGreaterThan(3);
    const before = sandbox.stats.requests(ASSETS);
    const { upload } = ok(await call(a, { kind: "asset", size: wav.byteLength, name: "two.wav" }));
    const data = (seq: number) => wav.subarray(seq * CHUNK, (seq + 1) * CHUNK).toString("base64");
    let last: Answer | undefined;
    for (let seq = 0; seq < count; seq++) {
      last = ok(await call(seq % 2 === 0 ? b : a, { upload, seq, data: data(seq) }));
      if (seq === 1) {
        // Chunk 1 again, to the replica that did not take it: answered as the upload stands.
        const again = ok(await call(b, { upload, seq, data: data(seq) }));
        expect(again).toMatchObject({ state: "receiving", received: 2 * CHUNK });
      }
    }
    expect(last?.state).toBe("finished");
    expect(last?.asset?.kind).toBe("audio");
    // The last chunk again, on the other replica: the same asset, from the record, nothing resent.
    const lastSeq = count - 1;
    const again = ok(await call(lastSeq % 2 === 0 ? a : b, { upload, seq: lastSeq, data: data(lastSeq) }));
    expect(again.asset).toEqual(last?.asset);
    expect(sandbox.stats.requests(ASSETS)).toBe(before + 1);
  }, 60_000);

  it("takes the chunks after chunk 0 all at once, in reverse order across the replicas, and sends the file once", async (ctx) => {
    if (store === undefined) return ctx.skip();
    const key = sandbox.addKey({});
    const [a, b] = [await connect(0, key), await connect(1, key)];
    const wav = renderAudio("any order", 150);
    const count = Math.ceil(wav.byteLength / CHUNK);
    const before = sandbox.stats.requests(ASSETS);
    const { upload } = ok(await call(b, { kind: "asset", size: wav.byteLength, name: "any.wav" }));
    const data = (seq: number) => wav.subarray(seq * CHUNK, (seq + 1) * CHUNK).toString("base64");
    ok(await call(a, { upload, seq: 0, data: data(0) }));
    const rest = Array.from({ length: count - 1 }, (_, i) => count - 1 - i);
    const answers = await Promise.all(
      rest.map(async (seq, i) => ok(await call(i % 2 ? a : b, { upload, seq, data: data(seq) }))),
    );
    // Whichever call added the last missing chunk sent the file; every other call saw it received.
    const done = answers.filter((x) => x.state !== "receiving");
    expect(done).toHaveLength(1);
    expect(done[0]?.asset?.kind).toBe("audio");
    expect(sandbox.stats.requests(ASSETS)).toBe(before + 1);
  }, 60_000);

  it("counts each user's uploads for the deployment: a fourth open on the other replica is refused", async (ctx) => {
    if (store === undefined) return ctx.skip();
    const key = sandbox.addKey({});
    const [a, b] = [await connect(0, key), await connect(1, key)];
    for (const client of [a, b, a]) ok(await call(client, { kind: "asset", size: 20 * 1024 * 1024 }));
    const fourth = await call(b, { kind: "asset", size: 1000 });
    expect(text(fourth)).toMatch(
      /^UPLOADS_BUSY: You have 3 uploads in progress \(the limit is 3 at once\).*Retry in about \d+ s/s,
    );
  }, 30_000);
});
