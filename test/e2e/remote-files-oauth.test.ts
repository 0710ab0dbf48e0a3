/**
 * Remote users and the server's files with `--auth oauth --sandbox` through the built CLI over
 * loopback, set up as the README's deploy example (no GENERATION_FILES): a user signed in on the
 * server's page in Debian's Chromium (dynamic registration, the SDK client's own OAuth) meets the
 * same refusal for every path, existing or missing, with no file read and no save written; neither
 * the start message nor /healthz names a server path.
 */
import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { chromiumMissing, hasChromium, launchChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";
import {
  approve,
  connectWithOAuth,
  MemoryOAuthProvider,
  openSignIn,
  startCallback,
} from "../helpers/oauth-flow.js";
import { expectPathsRefusedAlike, expectSavesRefused, plantServerFiles } from "../helpers/remote-probe.js";
import { freePort } from "../ledger/stores.js";

runnableOrSkipped(chromiumMissing(), "the OAuth remote-files tests (test/e2e/remote-files-oauth.test.ts)");

const iso = isolatedEnv();
let cli: Started;
let issuer: string;
let browser: Browser;
let callback: Awaited<ReturnType<typeof startCallback>>;
let client: Client;
let planted: Awaited<ReturnType<typeof plantServerFiles>>;

beforeAll(async () => {
  if (!hasChromium()) return;
  planted = await plantServerFiles(iso.dir);
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  callback = await startCallback();
  // As the README's deploy example: GENERATION_FILES is not set.
  const { GENERATION_FILES: _unset, ...env } = iso.env;
  cli = await startHttpCli(["--sandbox", "--auth", "oauth", "--port", String(port)], {
    ...env,
    GENERATION_PUBLIC_URL: issuer,
    GENERATION_AUTH_SECRET: Buffer.alloc(32, 9).toString("base64"),
  });
  browser = await launchChromium();
  const provider = new MemoryOAuthProvider(callback.url, "Remote Files Host");
  client = await connectWithOAuth(`${issuer}/mcp`, provider, async (url) =>
    approve(await openSignIn(browser, url), callback, { key: SANDBOX_API_KEY }),
  );
}, 90_000);

afterAll(async () => {
  await client?.close();
  await browser?.close();
  await cli?.stop();
  await callback?.close();
  iso.cleanup();
});

const call = async (name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

describe.runIf(hasChromium())("--auth oauth: a signed-in user and the server's files (built CLI)", () => {
  it("the start message and /healthz name no server path, and say files are off for remote users", async () => {
    expect(cli.stdout()).toMatch(/files: none for remote users/);
    const body = await (await fetch(`${issuer}/healthz`)).text();
    for (const shown of [cli.stdout(), body]) {
      expect(shown).not.toContain(iso.dir);
      expect(shown).not.toMatch(/generated|ledger\.sqlite/);
    }
  });

  it("answers every path alike, existing or missing, naming no server path, and reads no file", async () => {
    await expectPathsRefusedAlike(call, planted, iso.dir);
  }, 60_000);

  it("refuses every save before anything is spent or written, saying how to take the results", async () => {
    await expectSavesRefused(call, iso.dir);
  }, 60_000);

  it("tells the model so in its instructions", () => {
    expect(client.getInstructions()).toMatch(
      /This server keeps no files for you: upload media as base64 data/,
    );
  });
});
