/**
 * The attacker of bench/hostile.ts, in a process of its own (so its work does not share an event
 * loop with the well-behaved users being timed): `node --import tsx bench/hostile-attacker.ts
 * '<json Plan>'` floods every anonymous route as strangers from many addresses (forwarded by the
 * trusted loopback front) and has one signed-in key hammer every pool, for `seconds`, then prints
 * one JSON line: each kind of request's answers by status, and the refusals that said when to retry.
 */
import { connect, type Socket } from "node:net";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Agent, setGlobalDispatcher } from "undici";
import { APP_MIME_TYPE, APPS_EXTENSION, initializeRequest } from "../test/helpers/cli.js";
import { callTool, paddedCall } from "../test/helpers/tasks-wire.js";

export interface Plan {
  issuer: string;
  /** The signed-in attacker's access token. */
  token: string;
  /** A registered client, so authorization requests are valid and each stores an interaction. */
  clientId: string;
  seconds: number;
  /** Concurrent loops per anonymous route. */
  width: number;
  /** Idle connections held from an address the server does not trust as a proxy. */
  idle: number;
  bodyMiB: number;
  /** Upload chunk bytes sent in all (they are stored until the upload ends or idles out). */
  uploadMiB: number;
  /** This process's part: the big bodies alone (their sending would stall the rest), or the rest. */
  part: "bodies" | "rest";
}

type Tally = Record<string, Record<string, number>>;
const tally: Tally = {};
const count = (kind: string, what: string) => {
  const k = tally[kind] ?? {};
  k[what] = (k[what] ?? 0) + 1;
  tally[kind] = k;
};

/** A response's status, and whether a refusal said when to retry. */
function note(kind: string, res: Response): void {
  count(kind, String(res.status));
  if ((res.status === 429 || res.status === 503) && res.headers.get("retry-after") !== null)
    count(kind, "retryAfter");
}

const plan = JSON.parse(process.argv[2] ?? "{}") as Plan;
const until = Date.now() + plan.seconds * 1000;
const live = () => Date.now() < until;
let n = 0;
/** A stranger's address, one of 65,536 in TEST-NET-3's neighbourhood (RFC 5737 and 2544 ranges). */
const stranger = () => `198.19.${(n >> 8) & 255}.${n++ & 255}`;
const MCP = `${plan.issuer}/mcp`;

setGlobalDispatcher(new Agent({ keepAliveTimeout: 500, connect: { timeout: 60_000 } }));

async function loop(kind: string, width: number, once: () => Promise<Response | undefined>) {
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (live()) {
        const t = performance.now();
        try {
          const res = await once();
          if (process.env.BENCH_HOSTILE_DEBUG)
            process.stderr.write(`${kind} ${res?.status} ${(performance.now() - t).toFixed(0)} ms\n`);
          if (res !== undefined) {
            note(kind, res);
            await res.body?.cancel();
          }
        } catch {
          count(kind, "error");
        }
      }
    }),
  );
}

const anon = (path: string, init: RequestInit = {}) =>
  fetch(`${plan.issuer}${path}`, {
    redirect: "manual",
    ...init,
    headers: { "x-forwarded-for": stranger(), ...(init.headers as Record<string, string>) },
  });

function floods(): Promise<unknown>[] {
  const registration = JSON.stringify({
    redirect_uris: ["http://127.0.0.1:9/callback"],
    token_endpoint_auth_method: "none",
    client_name: "flood",
  });
  const json = { "content-type": "application/json" };
  const spellings = ["/oauth/register", "/oauth/Register", "/oauth/register/"];
  const query = new URLSearchParams({
    response_type: "code",
    client_id: plan.clientId,
    redirect_uri: "http://127.0.0.1:9/callback",
    scope: "mcp",
    resource: MCP,
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
  });
  const authorize = [
    ["GET", "/oauth/authorize"],
    ["GET", "/oauth/AUTHORIZE"],
    ["GET", "/oauth/authorize/"],
    ["HEAD", "/oauth/authorize"],
  ] as const;
  let i = 0;
  let j = 0;
  let c = 0;
  return [
    loop("register (3 spellings)", plan.width, () =>
      anon(spellings[i++ % 3] as string, { method: "POST", headers: json, body: registration }),
    ),
    loop("authorize (GET, case, slash, HEAD)", plan.width, () => {
      const [method, path] = authorize[j++ % 4] as readonly [string, string];
      return anon(`${path}?${query}`, { method });
    }),
    loop("token with CIMD client IDs", plan.width, () =>
      anon("/oauth/token", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: "x",
          code_verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
          redirect_uri: "http://127.0.0.1:9/callback",
          client_id: `https://cimd-${c++}.example.com/client.json`,
        }).toString(),
      }),
    ),
    loop("/mcp without a token", plan.width, () =>
      anon("/mcp", {
        method: "POST",
        headers: { ...json, accept: "application/json, text/event-stream" },
        body: JSON.stringify(initializeRequest("flood")),
      }),
    ),
  ];
}

const keyed = (body: string, extra: Record<string, string> = {}) =>
  fetch(MCP, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${plan.token}`,
      ...extra,
    },
    body,
  });

/** In-band refusals (a JSON-RPC error or an isError result) counted by the limit they name. */
function inBand(kind: string, text: string): void {
  if (process.env.BENCH_HOSTILE_DEBUG) process.stderr.write(`${kind}: ${text.slice(0, 300)}\n`);
  const named = /\b(listensPerKey|listens|tasksPerKey|TOO_MANY_TASKS|perUser\w*|total\w*|ledger\w+)\b/.exec(
    text,
  );
  count(kind, named === null ? "refused in band" : `refused: ${named[1]}`);
}

async function listens(): Promise<void> {
  const client = new Client(
    { name: "hog", version: "1" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(MCP), {
      requestInit: { headers: { authorization: `Bearer ${plan.token}` } },
    }),
  );
  const held: { close(): Promise<void> }[] = [];
  while (live()) {
    try {
      held.push(await client.listen({ toolsListChanged: true }));
      count("listen streams", "opened");
    } catch (error) {
      inBand("listen streams", String(error));
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  await Promise.all(held.map((h) => h.close().catch(() => {})));
  await client.close();
}

/** Slow tasks ([sandbox:slow]) started until refused, and on. */
async function tasks(): Promise<void> {
  let t = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (live()) {
        const args = { model: "sandbox-image-fast", prompt: `[sandbox:slow] hog ${process.pid} ${t++}` };
        try {
          const r = await callTool(MCP, "generate_image", args, { key: plan.token, tasks: true });
          if (r.result?.resultType === "task") count("MCP tasks", "started");
          else inBand("MCP tasks", JSON.stringify(r.error ?? r.result?.content ?? r.status));
        } catch {
          count("MCP tasks", "error");
        }
      }
    }),
  );
}

/** Upload slots opened until refused; chunks sent to the open ones; ID-only calls (refused, no bytes). */
async function uploads(): Promise<void> {
  const apps = { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };
  const call = (args: Record<string, unknown>) =>
    callTool(MCP, "viewer_upload", args, { key: plan.token, capabilities: apps });
  const open: string[] = [];
  const sent = new Map<string, number>();
  const chunk = Buffer.alloc(512 * 1024, 7).toString("base64");
  let budget = Math.floor((plan.uploadMiB * 1024 * 1024) / (512 * 1024));
  while (live()) {
    const r = await call({ kind: "asset", size: 24 * 1024 * 1024, name: "hog.png" }).catch(() => undefined);
    const id = r?.result?.structuredContent?.upload as string | undefined;
    if (id !== undefined && r?.result?.isError !== true) {
      count("upload slots", "opened");
      open.push(id);
    } else inBand("upload slots", JSON.stringify(r?.result?.content ?? r?.error ?? "error"));
    for (const upload of open) {
      const seq = sent.get(upload) ?? 0;
      const args = budget-- > 0 ? { upload, seq, data: chunk } : { upload };
      const c = await call(args).catch(() => undefined);
      if (c?.result?.isError === true) count("upload chunks", "refused");
      else if (budget >= 0) {
        count("upload chunks", "accepted");
        sent.set(upload, seq + 1);
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Connections held silent from 127.0.0.2 (not the trusted front), reopened when the server ends them. */
async function idleConnections(): Promise<void> {
  const port = Number(new URL(plan.issuer).port);
  const sockets = new Set<Socket>();
  const open = () => {
    if (!live()) return;
    const s = connect({ host: "127.0.0.1", port, localAddress: "127.0.0.2" });
    sockets.add(s);
    count("idle connections", "opened");
    s.once("data", (d: Buffer) => count("idle connections", d.toString().split("\r\n")[0] ?? "answered"));
    s.once("error", () => {});
    s.once("close", () => {
      sockets.delete(s);
      count("idle connections", "closed by the server");
      setTimeout(open, 50);
    });
  };
  for (let i = 0; i < plan.idle; i++) open();
  while (live()) await new Promise((r) => setTimeout(r, 250));
  for (const s of sockets) s.destroy();
}

/** Bodies of bodyMiB, six at once, each a tools/call whose padding no tool accepts. */
function bigBodies(): Promise<unknown> {
  if (plan.bodyMiB <= 0) return Promise.resolve();
  const { body, headers } = paddedCall(plan.bodyMiB);
  return loop(`${plan.bodyMiB} MiB bodies (6 at once)`, 6, () => keyed(body, headers));
}

function sessions(): Promise<unknown> {
  return loop("2025 sessions (never closed)", 2, () => keyed(JSON.stringify(initializeRequest("hog"))));
}

async function main(): Promise<void> {
  const jobs =
    plan.part === "bodies"
      ? [bigBodies()]
      : [...floods(), sessions(), listens(), tasks(), uploads(), idleConnections()];
  await Promise.all(jobs.map((j) => (j as Promise<unknown>).catch((e: unknown) => count("job", String(e)))));
  process.stdout.write(`${JSON.stringify(tally)}\n`);
  process.exit(0);
}

void main();
