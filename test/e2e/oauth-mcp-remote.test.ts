/**
 * A third-party OAuth client against the built CLI in `--auth oauth --sandbox` over loopback:
 * mcp-remote (the pinned devDependency), spoken to over stdio by the SDK client as a desktop host
 * would, once registering by dynamic client registration and once by a Client ID Metadata Document
 * (served over https, trusted by the CLI through NODE_EXTRA_CA_CERTS). mcp-remote prints the
 * sign-in URL on stderr (its browser opener is a no-op here); the user signs in on the server's
 * page in Debian's Chromium and the browser returns to mcp-remote's own callback. Then
 * list_models, a paid generate_image, and a refresh: the access token is revoked (which ends it
 * alone), mcp-remote's next call meets 401 and refreshes with its refresh token.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { chromiumMissing, hasChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, ROOT } from "../helpers/cli.js";
import { postForm } from "../helpers/oauth-flow.js";
import { type DocumentHost, type OAuthServer, startOAuthServer } from "../helpers/oauth-server.js";
import { freePort } from "../ledger/stores.js";

const MCP_REMOTE = join(ROOT, "node_modules", "mcp-remote", "dist", "proxy.js");

runnableOrSkipped(chromiumMissing(), "the mcp-remote OAuth tests (test/e2e/oauth-mcp-remote.test.ts)");

const iso = isolatedEnv();
let server: OAuthServer;
let issuer: string;
let browser: Browser;
let documents: DocumentHost;
/** A directory whose `xdg-open` does nothing: mcp-remote's opener must not start a real browser. */
let noBrowser: string;

/** What mcp-remote keeps in its config directory: the tokens and the registration it made. */
function stored(configDir: string, kind: "tokens" | "client_info"): Record<string, unknown> {
  const dir = join(configDir, readdirSync(configDir).find((d) => d.startsWith("mcp-remote")) ?? "");
  const file = readdirSync(dir).find((f) => f.endsWith(`_${kind}.json`)) ?? "";
  return JSON.parse(readFileSync(join(dir, file), "utf8")) as Record<string, unknown>;
}

/** Resolves with the URL mcp-remote asks the user to visit, from its stderr. */
function authorizationUrlFrom(stderr: Readable): Promise<string> {
  let text = "";
  return new Promise((resolve) => {
    stderr.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const url = /Please authorize this client by visiting:\s*(\S+)/.exec(text)?.[1];
      if (url !== undefined) resolve(url);
    });
  });
}

/** mcp-remote as a desktop host starts it, signed in by the user in Chromium; the connected client. */
async function connectThroughMcpRemote(
  configDir: string,
  extra: string[],
): Promise<{ client: Client; log: () => string }> {
  const port = await freePort();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_REMOTE, `${issuer}/mcp`, String(port), "--allow-http", ...extra],
    env: {
      PATH: `${noBrowser}:${process.env.PATH ?? ""}`,
      HOME: iso.dir,
      BROWSER: join(noBrowser, "xdg-open"),
      MCP_REMOTE_CONFIG_DIR: configDir,
    },
    stderr: "pipe",
  });
  let log = "";
  const stderr = transport.stderr as Readable;
  stderr.on("data", (c: Buffer) => {
    log += c.toString();
  });
  const signIn = authorizationUrlFrom(stderr).then(async (url) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(url);
    await page.fill("#key", SANDBOX_API_KEY);
    await page.click('button[value="allow"]');
    await page.waitForURL(/localhost:\d+\/oauth\/callback/, { timeout: 15_000 });
    await context.close();
  });
  const client = new Client({ name: "desktop-host", version: "1.0.0" });
  await client.connect(transport);
  await signIn;
  return { client, log: () => log };
}

/** list_models, a paid generate_image, then a refresh forced by revoking the access token. */
async function useAndRefresh(client: Client, configDir: string, clientId: string): Promise<void> {
  const models = await client.callTool({ name: "list_models", arguments: {} });
  expect(models.isError, JSON.stringify(models.content)).toBeFalsy();
  const paid = await client.callTool({
    name: "generate_image",
    arguments: { model: "sandbox-image-fast", prompt: "a lighthouse reached through mcp-remote", wait: 0 },
  });
  expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
  expect((paid.structuredContent as { created: boolean }).created).toBe(true);

  const before = stored(configDir, "tokens");
  const revoked = await postForm(`${issuer}/oauth/revoke`, {
    token: String(before.access_token),
    client_id: clientId,
  });
  expect(revoked.status).toBe(200);
  const again = await client.callTool({ name: "list_models", arguments: {} });
  expect(again.isError, JSON.stringify(again.content)).toBeFalsy();
  const after = stored(configDir, "tokens");
  expect(after.access_token).not.toBe(before.access_token);
  expect(after.refresh_token).not.toBe(before.refresh_token);
}

beforeAll(async () => {
  if (!hasChromium()) return;
  server = await startOAuthServer(iso, 19);
  ({ issuer, browser, documents } = server);
  noBrowser = join(iso.dir, "no-browser");
  mkdirSync(noBrowser);
  writeFileSync(join(noBrowser, "xdg-open"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(noBrowser, "xdg-open"), 0o755);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  iso.cleanup();
});

describe.runIf(hasChromium())("mcp-remote through the built CLI", () => {
  it("registers by DCR, signs in in Chromium, lists models, pays for an image and refreshes", async () => {
    const configDir = join(iso.dir, "mcp-remote-dcr");
    const { client, log } = await connectThroughMcpRemote(configDir, []);
    try {
      const clientId = String(stored(configDir, "client_info").client_id);
      expect(clientId).not.toMatch(/^https:/);
      await useAndRefresh(client, configDir, clientId);
    } finally {
      await client.close();
    }
    expect(log()).not.toContain(SANDBOX_API_KEY);
  }, 90_000);

  it("registers by a Client ID Metadata Document, and does the same", async () => {
    const configDir = join(iso.dir, "mcp-remote-cimd");
    const documentUrl = documents.serve("/mcp-remote.json", (url) => ({
      client_id: url,
      client_name: "mcp-remote (CIMD)",
      redirect_uris: ["http://localhost/oauth/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }));
    const { client } = await connectThroughMcpRemote(configDir, ["--client-metadata-url", documentUrl]);
    try {
      // No registration: the document's URL is the client's ID.
      await useAndRefresh(client, configDir, documentUrl);
    } finally {
      await client.close();
    }
    expect(documents.fetches("/mcp-remote.json")).toBeGreaterThan(0);
  }, 90_000);
});
