/**
 * Admission by CPU share (src/transports/http-admission.ts) through the built CLI over loopback HTTP
 * in `--auth oauth`: one signed-in key sending large bodies fast is refused 429 with Retry-After,
 * naming bodyMiBPerKeyMinute, before its bodies are read, while another key's calls, made at the
 * same time, are all served; and one address flooding an anonymous OAuth route is refused 429,
 * naming requestsPerAddressMinute, before the authorization server routes it, while a user from
 * another address still gets its answer; and a flood from many addresses is held to the strangers'
 * share (anonymousPerSecond, src/transports/http-anonymous.ts), refused 503 with Retry-After, while
 * a signed-in key is served and a newcomer, retrying as told, signs in. Counts and order, not timings.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox } from "../../src/sandbox/sandbox.js";
import { isolatedEnv, type Started } from "../helpers/cli.js";
import { startOAuthCli } from "../helpers/oauth-cli.js";
import { registerClient, signInDirect, userAddress } from "../helpers/sign-in-direct.js";
import { paddedCall, rpc } from "../helpers/tasks-wire.js";

const SECRET = Buffer.alloc(32, 9).toString("base64");
/** Anonymous requests one address may make a minute here: a sign-in takes about six. */
const PER_ADDRESS = 20;
/** The strangers' share a second: the default (src/config/serve-limits.ts). */
const SHARE = 40;

const iso = isolatedEnv();
const sandbox = createSandbox({ timeScale: 50 });
let service: { url: string; close(): Promise<void> };
let cli: Started;
let issuer: string;
let hog: string;
let good: string;

beforeAll(async () => {
  service = await sandbox.listen();
  ({ cli, issuer } = await startOAuthCli({
    env: {
      ...iso.env,
      GENERATION_HTTP_LIMITS: `bodyMiBPerKeyMinute=48,requestsPerAddressMinute=${PER_ADDRESS}`,
    },
    baseUrl: service.url,
    secret: SECRET,
  }));
  const clientId = await registerClient(issuer);
  const [a, b] = [0, 1].map(() => sandbox.addKey({ scopes: ["read", "generate"] }));
  hog = (await signInDirect(issuer, clientId, a as string, { from: userAddress(1) })).access;
  good = (await signInDirect(issuer, clientId, b as string, { from: userAddress(2) })).access;
}, 120_000);

afterAll(async () => {
  await cli?.stop();
  await service?.close();
  await sandbox.close();
  iso.cleanup();
});

const listModels = (token: string) =>
  rpc(`${issuer}/mcp`, "tools/call", { name: "list_models", arguments: {} }, { key: token });

/** A 2026-07-28 tools/call of list_models padded to about `mib` MiB, sent with its length. */
async function bigCall(
  token: string,
  mib: number,
): Promise<{ status: number; retryAfter: string | null; text: string }> {
  const { body, headers } = paddedCall(mib);
  const res = await fetch(`${issuer}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
      ...headers,
    },
    body,
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), text: await res.text() };
}

describe("one key's large bodies", () => {
  it("are refused past the key's byte rate before they are read, while another key is served", async () => {
    const goodCalls = async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        const r = await rpc(
          `${issuer}/mcp`,
          "tools/call",
          { name: "list_models", arguments: {} },
          { key: good },
        );
        statuses.push(
          r.status === 200 && r.error === undefined && r.result?.isError !== true ? 200 : r.status,
        );
      }
      return statuses;
    };
    // Two at a time, as fast as they go: 10 bodies of 10 MiB against 48 MiB a minute.
    const hogCalls = async () => {
      const answers: Awaited<ReturnType<typeof bigCall>>[] = [];
      for (let i = 0; i < 5; i++) answers.push(...(await Promise.all([bigCall(hog, 10), bigCall(hog, 10)])));
      return answers;
    };
    const [hogAnswers, goodStatuses] = await Promise.all([hogCalls(), goodCalls()]);
    const served = hogAnswers.filter((a) => a.status === 200);
    const refused = hogAnswers.filter((a) => a.status === 429);
    expect(served).toHaveLength(4);
    expect(refused).toHaveLength(6);
    for (const r of refused) {
      expect(r.retryAfter).toMatch(/^\d+$/);
      expect(Number(r.retryAfter)).toBeLessThanOrEqual(60);
      expect(r.text).toMatch(
        /48 MiB of request bodies this minute \(bodyMiBPerKeyMinute\); retry after \d+ s/,
      );
    }
    // The first bodies were served, the rest refused: the budget is spent in order.
    expect(hogAnswers.slice(0, 4).every((a) => a.status === 200)).toBe(true);
    expect(goodStatuses).toEqual(Array(8).fill(200));
    // Still refused after the other key's calls: it is the hog's budget, not the server, that is spent.
    expect((await bigCall(hog, 9)).status).toBe(429);
    expect(
      (await rpc(`${issuer}/mcp`, "tools/call", { name: "list_models", arguments: {} }, { key: good }))
        .status,
    ).toBe(200);
  }, 120_000);
});

describe("one address's anonymous requests", () => {
  it("are refused past the address's rate before the authorization server routes them", async () => {
    const from = (address: string) =>
      fetch(`${issuer}/.well-known/oauth-authorization-server`, { headers: { "x-forwarded-for": address } });
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < PER_ADDRESS + 5; i++) {
      last = await from("203.0.113.50");
      statuses.push(last.status);
      if (i < PER_ADDRESS + 4) await last.body?.cancel();
    }
    expect(statuses.slice(0, PER_ADDRESS)).toEqual(Array(PER_ADDRESS).fill(200));
    expect(statuses.slice(PER_ADDRESS)).toEqual(Array(5).fill(429));
    expect(last?.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await last?.text()).toMatch(/requestsPerAddressMinute/);
    // Another address is answered, and a signed-in key from the flooding address is served.
    expect((await from("203.0.113.51")).status).toBe(200);
    const keyed = await fetch(`${issuer}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${good}`,
        "x-forwarded-for": "203.0.113.50",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/list",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }),
    });
    expect(keyed.status).toBe(200);
  }, 60_000);
});

describe("a flood from many addresses", () => {
  it("is held to the strangers' share, while a key is served and a newcomer signs in", async () => {
    let n = 0;
    const started = performance.now();
    const until = started + 3_000;
    const tally: Record<number, number> = {};
    let refusal = "";
    // 16 closed loops, each request from an address of its own (past any per-address rate).
    const flood = Array.from({ length: 16 }, async () => {
      while (performance.now() < until) {
        const res = await fetch(`${issuer}/.well-known/oauth-authorization-server`, {
          headers: { "x-forwarded-for": `198.18.${(n >> 8) & 255}.${n++ & 255}` },
        });
        tally[res.status] = (tally[res.status] ?? 0) + 1;
        if (res.status === 503 && res.headers.get("retry-after") === "1") refusal = await res.text();
        else await res.body?.cancel();
      }
    });
    const key = sandbox.addKey({ scopes: ["read", "generate"] });
    const during = (async () => {
      const served = (await listModels(good)).status;
      const clientId = await registerClient(issuer);
      const newcomer = await signInDirect(issuer, clientId, key, { from: userAddress(3) });
      return { served, newcomer: (await listModels(newcomer.access)).status };
    })();
    await Promise.all(flood);
    const seconds = Math.ceil((performance.now() - started) / 1000);
    // At most three quarters of each second's share to new requests (the rest kept for sign-ins).
    expect(tally[200] ?? 0).toBeLessThanOrEqual((seconds + 1) * SHARE * 0.75);
    expect(tally[503] ?? 0).toBeGreaterThan(0);
    expect(refusal).toMatch(/anonymousPerSecond/);
    expect(await during).toEqual({ served: 200, newcomer: 200 });
  }, 60_000);
});
