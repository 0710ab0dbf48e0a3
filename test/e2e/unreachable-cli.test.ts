/**
 * A submission to a service that refuses the connection (ECONNREFUSED: nothing was sent) through
 * the built CLI over stdio: the answer says nothing was sent and nothing charged, the ledger closes
 * the record instead of leaving it uncertain (nothing to replay, nothing for recover_lost_work),
 * and once the service listens the same call goes through as one new request.
 */
import { createServer } from "node:net";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { CLI, type ConnectedCli, connectCli, isolatedEnv } from "../helpers/cli.js";

type Result = Awaited<ReturnType<Client["callTool"]>>;
const textOf = (r: Result): string =>
  (r.content as { type: string; text?: string }[]).find((c) => c.type === "text")?.text ?? "";

/** A loopback port nothing listens on (taken and let go). */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

let port: number;
let sandbox: Sandbox;
let key: string;
let cli: ConnectedCli;
const iso = isolatedEnv();

beforeAll(async () => {
  port = await freePort();
  sandbox = createSandbox();
  key = sandbox.addKey({ scopes: ["read", "generate"] });
  cli = await connectCli({
    args: [CLI],
    env: { ...iso.env, GENERATION_BASE_URL: `http://127.0.0.1:${port}`, GENERATION_API_KEY: key },
  });
});

afterAll(async () => {
  await cli?.client.close();
  await sandbox?.close();
  iso.cleanup();
});

const args = { model: "sandbox-image-fast", prompt: "a lamp in the dark", wait: 0 };

describe("a connection refused before anything was sent", () => {
  it("is answered as not sent, and its record is closed, not uncertain", async () => {
    const r = await cli.client.callTool({ name: "generate_image", arguments: args });
    const text = textOf(r);
    expect(r.isError).toBe(true);
    expect(text).toMatch(
      /^SERVICE_UNREACHABLE: POST \/api\/generate\/image failed: ECONNREFUSED \(nothing was sent\)/,
    );
    expect(text).toContain("Nothing was sent and nothing was charged");
    expect(text).toMatch(/closed: nothing was sent under it/);
    expect(text).not.toMatch(/replays|outcome is unknown/);

    const listed = await cli.client.callTool({ name: "list_requests", arguments: {} });
    const requests = (
      listed.structuredContent as { requests: { state: string; closedReason?: { code: string } }[] }
    ).requests;
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ state: "closed", closedReason: { code: "SERVICE_UNREACHABLE" } });
    const open = await cli.client.callTool({ name: "list_requests", arguments: { state: "open" } });
    expect((open.structuredContent as { requests: unknown[] }).requests).toEqual([]);
  }, 60_000);

  it("once the service listens, the same call is one new request", async () => {
    const listening = await sandbox.listen({ host: "127.0.0.1", port });
    try {
      const r = await cli.client.callTool({ name: "generate_image", arguments: args });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect((r.structuredContent as { created: boolean }).created).toBe(true);
      expect(sandbox.stats.dispatches("POST /api/generate/image")).toBe(1);
    } finally {
      await listening.close();
    }
  }, 60_000);
});
