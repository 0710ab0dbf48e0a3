/**
 * What the OAuth sign-in tests through the built CLI share (test/e2e/oauth-flow.test.ts,
 * test/e2e/oauth-refusals.test.ts): one `--auth oauth --sandbox` server with Chromium, a callback
 * host, a CIMD document, and every page and response a user or host saw, searched for the key at
 * the end. Call it at a file's top level: it registers the file's beforeAll and afterAll.
 */
import type { Client } from "@modelcontextprotocol/client";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import type { LedgerStore } from "../../src/ledger/store.js";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { hasChromium } from "./chromium.js";
import type { isolatedEnv, Started } from "./cli.js";
import {
  approve,
  type Callback,
  connectWithOAuth,
  type FetchLike,
  initializeStatus,
  MemoryOAuthProvider,
  openSignIn,
  startCallback,
} from "./oauth-flow.js";
import { type DocumentHost, type OAuthServer, startOAuthServer, tokenStore } from "./oauth-server.js";

const KEY = SANDBOX_API_KEY;

export interface FlowState {
  server: OAuthServer;
  cli: Started;
  issuer: string;
  mcpUrl: string;
  browser: Browser;
  callback: Callback;
  documents: DocumentHost;
  cimdUrl: string;
  store: LedgerStore;
}

export function oauthFlowHarness(iso: ReturnType<typeof isolatedEnv>) {
  const state = {} as FlowState;
  /** Every page and response body a user or host saw, searched for the key at the end. */
  const seen: string[] = [];

  beforeAll(async () => {
    if (!hasChromium()) return;
    // A short grace, so a reuse after it is reached within the test (oauth-tokens.test.ts tests the grace).
    const server = await startOAuthServer(iso, 7, { GENERATION_AUTH_REFRESH_GRACE: "1s" });
    const { cli, issuer, mcpUrl, browser, store, documents } = server;
    const callback = await startCallback();
    const cimdUrl = documents.serve("/client.json", (clientId) => ({
      client_id: clientId,
      client_name: "CIMD Test Host",
      redirect_uris: [callback.url],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }));
    Object.assign(state, { server, cli, issuer, mcpUrl, browser, store, documents, callback, cimdUrl });
  }, 60_000);

  afterAll(async () => {
    await state.server?.stop();
    await state.callback?.close();
    iso.cleanup();
  });

  /** fetch without following redirects, keeping each response body for the search at the end. */
  const seenFetch: FetchLike = async (url, init) => {
    const res = await fetch(url, { redirect: "manual", ...init });
    seen.push(await res.clone().text());
    return res;
  };

  return {
    state,
    seen,
    /** Rows of the token store whose key starts with `oauth:<prefix>`. */
    rows: async (prefix: string): Promise<number> => (await tokenStore(state.store).size(prefix)).rows,
    raw: (path: string, init?: RequestInit): Promise<Response> => seenFetch(`${state.issuer}${path}`, init),
    mcpStatus: (token: string): Promise<number> => initializeStatus(`${state.issuer}/mcp`, token, seenFetch),
    /** Signs in a DCR host with the sandbox key typed; its provider holds the tokens. */
    async dcrSignIn(name: string): Promise<{ provider: MemoryOAuthProvider; client: Client }> {
      const provider = new MemoryOAuthProvider(state.callback.url, name);
      const client = await connectWithOAuth(state.mcpUrl, provider, async (url) => {
        const page = await openSignIn(state.browser, url);
        seen.push(await page.content());
        return approve(page, state.callback, { key: KEY });
      });
      return { provider, client };
    },
    /** The key in no byte of the store, stdout, stderr, or any page or response seen. */
    keyNowhere(): void {
      const base64 = Buffer.from(KEY).toString("base64").slice(4, 40);
      for (const [label, text] of [
        ["store", state.server.storeBytes()],
        ["stdout", state.cli.stdout()],
        ["stderr", state.cli.stderr()],
        ["pages and responses", seen.join("\n")],
      ] as const) {
        expect(text.toLowerCase().includes(KEY.slice(4, 20)), label).toBe(false);
        expect(text.includes(base64), label).toBe(false);
      }
      expect(seen.length).toBeGreaterThan(2);
    },
  };
}
