/**
 * `--auth oauth` through the built CLI with 1,000 users signed in on one replica (an engine kept for
 * each, engine.ts; drops while a request holds its engine are tested in engine-cache.test.ts). Each
 * user signs in with their own key through the sign-in page's form (test/helpers/sign-in-direct.ts:
 * one registered client, as one host serves all its users; no browser, which would add nothing
 * here but minutes), then opens a 2025-11-25 session and calls list_models, hundreds at once;
 * then calls again on that session, and once more on the 2026-07-28 wire. No answer is a 5xx:
 * each request holds the engine its token gave it, whatever the cache drops meanwhile, even one
 * whose body is still arriving while hundreds of other users come and go (a slow upload). The store
 * lives in memory (/dev/shm, where there is one): every sign-in makes about ten durable commits,
 * and their fsyncs, minutes for 1,000 users on a disk, are not what this test is about.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox } from "../../src/sandbox/sandbox.js";
import { initializeRequest, isolatedEnv, type Started } from "../helpers/cli.js";
import { startOAuthCli } from "../helpers/oauth-cli.js";
import { inParallel, registerClient, signInDirect, userAddress } from "../helpers/sign-in-direct.js";

const USERS = 1_000;
/** Users who open sessions while user 0's body is held back. */
const CROWD = 640;
/** Requests in flight at once: enough that hundreds of token checks interleave with drops. */
const AT_ONCE = 400;
const SECRET = Buffer.alloc(32, 5).toString("base64");

const iso = isolatedEnv();
const memory = existsSync("/dev/shm") ? mkdtempSync("/dev/shm/generation-mcp-many-") : iso.dir;
const sandbox = createSandbox({ timeScale: 50 });
let service: { url: string; close(): Promise<void> };
let cli: Started;
let issuer: string;
let tokens: string[] = [];

beforeAll(async () => {
  service = await sandbox.listen();
  // Each user from an address of their own, as a TLS front in front of the server forwards it;
  // a thousand sign-ins at once, not the strangers' share (admission-cli.test.ts), is tested here.
  ({ cli, issuer } = await startOAuthCli({
    env: {
      ...iso.env,
      GENERATION_STORE: `sqlite://${join(memory, "ledger.sqlite")}`,
      GENERATION_HTTP_LIMITS: "anonymousPerSecond=100000,anonymousInFlight=10000",
    },
    baseUrl: service.url,
    secret: SECRET,
  }));
  const keys = Array.from({ length: USERS }, () => sandbox.addKey({ scopes: ["read", "generate"] }));
  const clientId = await registerClient(issuer);
  tokens = await inParallel(
    keys,
    16,
    async (key, i) => (await signInDirect(issuer, clientId, key, { from: userAddress(i) })).access,
  );
}, 240_000);

afterAll(async () => {
  await cli?.stop();
  await service?.close();
  await sandbox.close();
  rmSync(memory, { recursive: true, force: true });
  iso.cleanup();
});

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** One POST on the 2025 wire; the status and the body's text. */
async function post(
  token: string,
  body: object,
  session?: string,
): Promise<{ status: number; text: string; session: string | null }> {
  const res = await fetch(`${issuer}/mcp`, {
    method: "POST",
    headers: {
      ...HEADERS,
      authorization: `Bearer ${token}`,
      ...(session === undefined ? {} : { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" }),
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), session: res.headers.get("mcp-session-id") };
}

const listModels = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "list_models", arguments: {} },
});

describe("1,000 signed-in users on one replica", () => {
  it("signs every user in, more users than engines kept", () => {
    expect(tokens).toHaveLength(USERS);
  });

  const sessions: string[] = [];
  const statuses: number[] = [];
  /** Opens user `i`'s session (its initialize, if given, already answered) and calls list_models. */
  const openAndCall = async (i: number, opened?: { status: number; session: string | null }) => {
    const token = tokens[i] as string;
    const answer = opened ?? (await post(token, initializeRequest("many")));
    statuses.push(answer.status);
    const session = answer.session ?? "";
    await post(token, { jsonrpc: "2.0", method: "notifications/initialized" }, session);
    const called = await post(token, listModels(2), session);
    statuses.push(called.status);
    expect(called.text).toContain("sandbox-image-fast");
    expect(called.text).not.toContain('"isError":true');
    sessions[i] = session;
  };

  it("serves a request under the engine its token gave it, though its body arrives after hundreds of others", async () => {
    // User 0's token is checked from the headers; its body is held back until hundreds of other
    // users have opened sessions (each a new engine).
    const body = JSON.stringify(initializeRequest("slow"));
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(body.slice(0, 20)));
        await held;
        controller.enqueue(new TextEncoder().encode(body.slice(20)));
        controller.close();
      },
    });
    const slow = fetch(`${issuer}/mcp`, {
      method: "POST",
      headers: { ...HEADERS, authorization: `Bearer ${tokens[0]}` },
      body: stream,
      duplex: "half",
    } as RequestInit);
    const crowd = Array.from({ length: CROWD }, (_, i) => i + 1);
    await inParallel(crowd, AT_ONCE, (i) => openAndCall(i));
    release();
    const res = await slow;
    await openAndCall(0, { status: res.status, session: res.headers.get("mcp-session-id") });
    await res.text();
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  }, 180_000);

  it("opens a session and calls list_models for every other user, hundreds at once, with no 5xx", async () => {
    const rest = Array.from({ length: USERS }, (_, i) => i).filter((i) => sessions[i] === undefined);
    await inParallel(rest, AT_ONCE, (i) => openAndCall(i));
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(sessions.filter((s) => s !== "")).toHaveLength(USERS);
  }, 180_000);

  it("opens a second session for a third of the users (a new conversation), past a thousand sessions", async () => {
    const again = await inParallel(tokens.slice(0, Math.ceil(USERS / 3)), AT_ONCE, async (token) => {
      const opened = await post(token, initializeRequest("second"));
      return opened.status;
    });
    expect(again.filter((s) => s !== 200)).toEqual([]);
  }, 180_000);

  it("answers each session's next call though most of their engines were dropped since", async () => {
    const statuses = await inParallel(tokens, AT_ONCE, async (token, i) => {
      const called = await post(token, listModels(3), sessions[i]);
      expect(called.text).not.toContain('"isError":true');
      return called.status;
    });
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  }, 180_000);

  it("answers every user on the 2026-07-28 wire too, in no particular order, each request on its own", async () => {
    // Users come back in a scattered order: the engines of some are kept (found by their token's
    // hash), others are made anew, dropping the least recently used meanwhile.
    const scattered = tokens.map((_, i) => tokens[(i * 7_919) % USERS] as string);
    const failures = await inParallel(scattered, 100, async (token) => {
      const client = new Client(
        { name: "many", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      const transport = new StreamableHTTPClientTransport(new URL(`${issuer}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      });
      try {
        await client.connect(transport);
        const result = await client.callTool({ name: "list_models", arguments: {} });
        return result.isError ? JSON.stringify(result.content) : undefined;
      } catch (error) {
        return String(error);
      } finally {
        await client.close();
      }
    });
    expect(failures.filter((f) => f !== undefined)).toEqual([]);
  }, 180_000);
});
