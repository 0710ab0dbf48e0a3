/**
 * The MCP conformance suite's authorization-server scenarios (@modelcontextprotocol/conformance,
 * the pinned devDependency: `authorization --url <issuer> --client-id <id> --resource <mcp url>
 * -p <port>`) against the built CLI in `--auth oauth --sandbox` over loopback: the metadata, and
 * the authorization code grant of a client that sends no `scope` (code, state, `iss`, the token
 * response and its `Cache-Control: no-store`). The suite prints the authorization URL and waits
 * for its own callback; the user's step is played in Debian's Chromium.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { chromiumMissing, hasChromium, runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, ROOT } from "../helpers/cli.js";
import { register } from "../helpers/oauth-hosts.js";
import { type OAuthServer, startOAuthServer } from "../helpers/oauth-server.js";
import { freePort } from "../ledger/stores.js";

const SUITE = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const nodeMajor = Number(process.versions.node.split(".")[0]);
const missing =
  nodeMajor < 22
    ? `the conformance suite needs Node 22 or newer (this is ${process.version})`
    : chromiumMissing();
const ready = runnableOrSkipped(missing, "the OAuth conformance test (test/e2e/oauth-conformance.test.ts)");

const iso = isolatedEnv();
let server: OAuthServer;
let issuer: string;
let browser: Browser;

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** Runs the suite to its end; plays the user when it prints the authorization URL. */
function runSuite(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SUITE, "authorization", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let signedIn = false;
    const timer = setTimeout(() => child.kill(), 90_000);
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const url = /complete the authentication process\.\s*\n(\S+)/.exec(out)?.[1];
      if (url === undefined || signedIn) return;
      signedIn = true;
      void (async () => {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(url);
        await page.fill("#key", SANDBOX_API_KEY);
        await page.click('button[value="allow"]');
        await page.waitForURL(/127\.0\.0\.1:\d+\/callback/, { timeout: 15_000 });
        await context.close();
      })().catch(reject);
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

beforeAll(async () => {
  if (!ready) return;
  server = await startOAuthServer(iso, 23);
  ({ issuer, browser } = server);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  iso.cleanup();
});

describe.runIf(ready && hasChromium())("the conformance suite's authorization-server scenarios", () => {
  it("pass: metadata, and the code grant of a client sending no scope, signed in in Chromium", async () => {
    const callbackPort = await freePort();
    const reg = await register(issuer, {
      client_name: "MCP conformance suite",
      redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`],
      token_endpoint_auth_method: "none",
    });
    expect(reg.status).toBe(201);
    const outDir = join(iso.dir, "conformance");
    const run = await runSuite([
      "--url",
      issuer,
      "--client-id",
      String(reg.body.client_id),
      "--resource",
      `${issuer}/mcp`,
      "-p",
      String(callbackPort),
      "-o",
      outDir,
    ]);
    const checks: Check[] = readdirSync(outDir).flatMap((d) => {
      const file = join(outDir, d, "checks.json");
      return JSON.parse(readFileSync(file, "utf8")) as Check[];
    });
    const byId = Object.fromEntries(checks.map((c) => [c.id, c]));
    expect(byId["authorization-server-metadata"]?.status, run.out).toBe("SUCCESS");
    expect(byId["authorization-server-metadata-cimd"]?.status, run.out).toBe("SUCCESS");
    expect(byId["authorization-code-grant"]?.status, JSON.stringify(byId["authorization-code-grant"])).toBe(
      "SUCCESS",
    );
    // Anything else the suite runs (DPoP, for an authorization server that advertises it) is passed or skipped.
    for (const check of checks) expect(["SUCCESS", "SKIPPED"], JSON.stringify(check)).toContain(check.status);
    expect(run.code, run.out).toBe(0);
  }, 120_000);
});
