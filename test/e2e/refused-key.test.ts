/**
 * A key the service refuses (401 INVALID_API_KEY: well-formed but unknown, or revoked) is known
 * early and costs no more records: on stdio it is checked at start, in the background, and said on
 * stderr; once the service has refused a key, paid calls under it are refused locally, with no new
 * ledger record, and the next step names the fix that works where the key came from:
 * GENERATION_API_KEY on stdio, the Authorization header on HTTP, reconnecting the connector for a
 * user signed in through --auth oauth. Until the service refuses a key, nothing is blocked.
 * Through the built CLI against the sandbox over loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox } from "../../src/sandbox/sandbox.js";
import { CLI, connectCli, initializeRequest, isolatedEnv, startHttpCli } from "../helpers/cli.js";
import { startOAuthCli } from "../helpers/oauth-cli.js";
import { registerClient, signInDirect } from "../helpers/sign-in-direct.js";

type Result = { isError?: boolean; content?: unknown; structuredContent?: Record<string, unknown> };
const textOf = (r: Result): string =>
  ((r.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");

const UNKNOWN = `lgk_${"7e".repeat(32)}`;
const PAID = { model: "sandbox-image-fast", prompt: "a lantern in the fog", wait: 0 };
const LOCAL = "nothing was recorded";

const iso = isolatedEnv();
const sandbox = createSandbox({ timeScale: 50 });
let service: { url: string; close(): Promise<void> };
beforeAll(async () => {
  service = await sandbox.listen();
});
afterAll(async () => {
  await service?.close();
  await sandbox.close();
  iso.cleanup();
});

const until = async (ok: () => boolean, ms = 10_000): Promise<void> => {
  for (const end = Date.now() + ms; !ok() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
};

describe("stdio with a well-formed key the service does not know", () => {
  it("says so on stderr soon after start, then refuses paid calls locally, naming GENERATION_API_KEY", async () => {
    const env = { ...iso.env, GENERATION_BASE_URL: service.url, GENERATION_API_KEY: UNKNOWN };
    const { client, stderr } = await connectCli({ args: [CLI], env });
    try {
      // Nothing called yet: the start-up check finds it.
      await until(() => stderr().includes("refused the key in GENERATION_API_KEY"));
      expect(stderr()).toContain("the service refused the key in GENERATION_API_KEY (INVALID_API_KEY");
      const before = sandbox.stats.requests("POST /api/generate/image");
      for (let i = 0; i < 2; i++) {
        const refused = (await client.callTool({ name: "generate_image", arguments: PAID })) as Result;
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toMatch(/^INVALID_API_KEY: /);
        expect(textOf(refused)).toContain(LOCAL);
        expect(textOf(refused)).toContain("Set it to a key the service accepts, then restart the MCP server");
      }
      expect(sandbox.stats.requests("POST /api/generate/image")).toBe(before);
      const listed = (await client.callTool({ name: "list_requests", arguments: {} })) as Result;
      expect(listed.structuredContent?.requests).toEqual([]);
      expect(stderr()).not.toContain(UNKNOWN.slice(4));
    } finally {
      await client.close();
    }
  });

  it("says nothing and blocks nothing for a key the service accepts", async () => {
    const key = sandbox.addKey({ scopes: ["read", "generate"] });
    const env = { ...iso.env, GENERATION_BASE_URL: service.url, GENERATION_API_KEY: key };
    const { client, stderr } = await connectCli({ args: [CLI], env });
    try {
      await new Promise((r) => setTimeout(r, 1_500));
      const paid = (await client.callTool({ name: "generate_image", arguments: PAID })) as Result;
      expect(paid.isError, textOf(paid)).toBeFalsy();
      expect(stderr()).not.toContain("refused");
    } finally {
      await client.close();
    }
  });
});

describe("HTTP with a key the service revokes while sessions use it", () => {
  it("records the call the service refused, then refuses the next one locally, naming the Authorization header", async () => {
    const key = sandbox.addKey({ scopes: ["read", "generate"] });
    const cli = await startHttpCli([], { ...iso.env, GENERATION_BASE_URL: service.url });
    const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
    const client = new Client({ name: "refused-http", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(cli.url), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    try {
      const ok = (await client.callTool({ name: "generate_image", arguments: PAID })) as Result;
      expect(ok.isError, textOf(ok)).toBeFalsy();
      sandbox.revokeKey(key);
      const first = (await client.callTool({
        name: "generate_image",
        arguments: { ...PAID, prompt: "a second lantern" },
      })) as Result;
      expect(textOf(first)).toMatch(/^INVALID_API_KEY: /);
      expect(textOf(first)).toContain("HTTP 401");
      expect(textOf(first)).toContain("this request's Authorization header");
      expect(textOf(first)).not.toContain("GENERATION_API_KEY");
      const second = (await client.callTool({
        name: "generate_image",
        arguments: { ...PAID, prompt: "a third lantern" },
      })) as Result;
      expect(textOf(second)).toContain(LOCAL);
      const listed = (await client.callTool({ name: "list_requests", arguments: {} })) as Result;
      expect(listed.isError, textOf(listed)).toBeFalsy();
      // The accepted call and the one the service refused; none for the call refused here.
      expect(listed.structuredContent?.requests).toHaveLength(2);
    } finally {
      await client.close();
      await cli.stop();
    }
  });
});

describe("--auth oauth, a signed-in user whose key the service revokes", () => {
  it("is told to reconnect the connector, and the sign-in ends", async () => {
    const { cli, issuer } = await startOAuthCli({
      env: iso.env,
      baseUrl: service.url,
      secret: Buffer.alloc(32, 4).toString("base64"),
    });
    try {
      const key = sandbox.addKey({ scopes: ["read", "generate"] });
      const { access } = await signInDirect(issuer, await registerClient(issuer), key);
      const headers = {
        authorization: `Bearer ${access}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      };
      const post = async (body: object, session?: string) => {
        const res = await fetch(`${issuer}/mcp`, {
          method: "POST",
          headers: session === undefined ? headers : { ...headers, "mcp-session-id": session },
          body: JSON.stringify(body),
        });
        return { status: res.status, session: res.headers.get("mcp-session-id"), text: await res.text() };
      };
      const opened = await post(initializeRequest("oauth-refused"));
      const session = opened.session ?? "";
      await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
      sandbox.revokeKey(key);
      const call = {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "generate_image", arguments: PAID },
      };
      const refused = await post(call, session);
      expect(refused.text).toContain("INVALID_API_KEY");
      expect(refused.text).toContain("Reconnect the connector in your app");
      expect(refused.text).not.toContain("GENERATION_API_KEY");
      // The grant over the refused key is ended: the token no longer opens anything.
      let status = 0;
      for (let i = 0; i < 50 && status !== 401; i++) {
        status = (await post(initializeRequest("again"))).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(401);
    } finally {
      await cli.stop();
    }
  });
});
