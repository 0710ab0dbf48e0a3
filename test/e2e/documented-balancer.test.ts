/**
 * The HAProxy files docs/deploying.md and docs/oauth.md give whole, run as written (read from the
 * Markdown, only ports, addresses and paths replaced): HAProxy takes them without a warning; in
 * key mode, three replicas that know their public name (GENERATION_PUBLIC_URL) pass the documented
 * health check and answer requests for that name through the TLS front; a replica without it
 * refuses the name; a 2025-11-25 session stays on one replica through the documented stickiness;
 * one address is held to 256 connections at the front while another is served;
 * and a replica that stops is taken out by the check while the others go on answering.
 */
import { execFileSync } from "node:child_process";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect, type Socket } from "node:net";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runnableOrSkipped } from "../helpers/chromium.js";
import { isolatedEnv, startHttpCli } from "../helpers/cli.js";
import { selfSignedCert } from "../helpers/oauth-flow.js";
import { available, freePort } from "../ledger/stores.js";
import {
  type Deployment,
  type Documented,
  haproxyConfig,
  haproxyInstalled,
  startDeployment,
} from "./balancer.js";

const ready = runnableOrSkipped(
  haproxyInstalled() ? undefined : "haproxy is not installed (apt-get install haproxy)",
  "the documented balancer tests (test/e2e/documented-balancer.test.ts)",
);
const PUBLIC = "mcp.example.com";
const iso = isolatedEnv();
let d: Deployment | undefined;
let key: string;

beforeAll(async () => {
  if (!ready || !(await available("postgres"))) return;
  d = await startDeployment({ env: { GENERATION_PUBLIC_URL: `https://${PUBLIC}` } });
  key = d.sandbox.addKey({ scopes: ["read", "generate"] });
}, 90_000);
afterAll(async () => {
  await d?.stop();
  iso.cleanup();
});

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

/**
 * One MCP initialize with `Host` forged (fetch will not send another), through the TLS front or
 * straight to a replica's plain `url`; resolves with the status.
 */
function initialize(host: string, url?: string): Promise<number> {
  const tls = url === undefined;
  const target = new URL(url ?? (d as Deployment).balancer.url);
  const headers = {
    host,
    authorization: `Bearer ${key}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const options = { host: "127.0.0.1", port: target.port, path: "/mcp", method: "POST", headers };
  return new Promise((resolve, reject) => {
    const done = (res: IncomingMessage) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    };
    const req = tls
      ? httpsRequest({ ...options, servername: "localhost", ca: (d as Deployment).balancer.tls.cert }, done)
      : httpRequest(options, done);
    req.on("error", reject);
    req.end(INIT);
  });
}
const throughFront = (host: string) => initialize(host);

/** `GET /healthz` through the TLS front from the local address `from`: its status, or "reset". */
function healthzFrom(from: string): Promise<number | "reset"> {
  const { port } = new URL((d as Deployment).balancer.url);
  const ca = (d as Deployment).balancer.tls.cert;
  const options = {
    host: "127.0.0.1",
    port,
    path: "/healthz",
    localAddress: from,
    servername: "localhost",
    ca,
  };
  return new Promise((resolve) => {
    const req = httpsRequest(options, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve("reset"));
    req.end();
  });
}

/** `count` bare TCP connections to the front from `from` (no TLS handshake, nothing sent). */
function bareConnections(from: string, count: number): Socket[] {
  const { port } = new URL((d as Deployment).balancer.url);
  return Array.from({ length: count }, () =>
    connect({ host: "127.0.0.1", port: Number(port), localAddress: from }).on("error", () => undefined),
  );
}

async function until(done: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  for (const end = Date.now() + ms; !(await done()) && Date.now() < end; )
    await new Promise((r) => setTimeout(r, 50));
}

describe.runIf(ready)("the documented HAProxy files", () => {
  it.for(["key", "oauth"] as const)(
    "%s mode's file passes haproxy -c with no warning",
    async (doc: Documented) => {
      const tls = selfSignedCert(iso.dir);
      const config = haproxyConfig(doc, {
        port: await freePort(),
        statsPort: await freePort(),
        replicas: ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"],
        pem: tls.pemPath,
        socket: `${iso.dir}/admin.sock`,
      });
      for (const line of [
        "mode http",
        "option forwardfor",
        "option httpchk",
        "stick on req.hdr(mcp-session-id)",
        "tcp-request connection reject if { sc0_conn_cur gt 256 }",
        "timeout client 30s",
      ]) {
        expect(config).toContain(line);
      }
      expect(config.match(/^ {2}server r\d .* check$/gm)).toHaveLength(3);
      const file = `${iso.dir}/${doc}.cfg`;
      execFileSync("sh", ["-c", `cat > "${file}"`], { input: config });
      const out = execFileSync("sh", ["-c", `haproxy -c -f "${file}" 2>&1`]).toString();
      expect(out).not.toMatch(/WARNING|ALERT/);
    },
  );
});

describe.runIf(ready)("key mode behind the documented front, under a public name", () => {
  it("every replica passes the documented health check, and requests for the public name are answered", async (ctx) => {
    if (d === undefined) return ctx.skip();
    expect(await d.balancer.servers()).toEqual(
      ["r1", "r2", "r3"].map((name) => ({ name, status: "UP", check: "L7OK" })),
    );
    // Round robin over three replicas: six requests reach each at least once.
    for (let i = 0; i < 6; i++) expect(await throughFront(PUBLIC)).toBe(200);
    expect(await throughFront("elsewhere.example.com")).toBe(403);
    for (const r of d.replicas)
      expect(r.stderr()).toMatch(/accepting Host: .*mcp\.example\.com \(any port\)/);
  });

  it("a replica without GENERATION_PUBLIC_URL refuses the name; with it, the name is accepted", async (ctx) => {
    if (d === undefined) return ctx.skip();
    const without = await startHttpCli([], d.replicaEnv());
    const named = await startHttpCli([], d.replicaEnv({ GENERATION_ALLOWED_HOSTS: PUBLIC }));
    try {
      expect(await initialize(PUBLIC, without.url)).toBe(403);
      expect(await initialize(PUBLIC, named.url)).toBe(200);
      expect(without.stderr()).not.toMatch(/mcp\.example\.com/);
    } finally {
      await Promise.all([without.stop(), named.stop()]);
    }
  });

  it("a 2025-11-25 session stays on the replica that created it, through the documented stickiness", async (ctx) => {
    if (d === undefined) return ctx.skip();
    const { balancer } = d;
    const client = new Client({ name: "sticky", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(balancer.url), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: balancer.fetch,
    });
    await client.connect(transport);
    try {
      expect(transport.sessionId).toBeDefined();
      const before = await balancer.sessionsPerReplica();
      // Round robin alone would spread nine requests over all three; a replica that does not know
      // the session answers 404, which fails the call.
      for (let i = 0; i < 9; i++) {
        const out = await client.callTool({ name: "list_models", arguments: {} });
        expect(out.isError, JSON.stringify(out.content)).toBeFalsy();
      }
      const after = await balancer.sessionsPerReplica();
      const grew = after.map((n, i) => n - (before[i] ?? 0)).filter((n) => n > 0);
      expect(grew).toHaveLength(1);
      expect(grew[0]).toBeGreaterThanOrEqual(9);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });

  it("one address is held to 256 connections at the front, before any handshake, while another is served", async (ctx) => {
    if (d === undefined) return ctx.skip();
    const held = bareConnections("127.0.0.2", 260);
    try {
      const closed = () => held.filter((s) => s.destroyed).length;
      await until(() => closed() >= 4);
      await new Promise((r) => setTimeout(r, 300));
      // The front reset the four past 256 and kept the rest, silent as they are.
      expect(closed()).toBe(4);
      expect(await healthzFrom("127.0.0.2")).toBe("reset");
      expect(await healthzFrom("127.0.0.3")).toBe(200);
    } finally {
      for (const s of held) s.destroy();
    }
    // Once they close, the address is served again.
    const seen: Array<number | "reset"> = [];
    await until(async () => seen.push(await healthzFrom("127.0.0.2")) > 0 && seen.at(-1) === 200);
    expect(seen.at(-1)).toBe(200);
  });

  it("a replica that stops is marked down by the check, and the others go on answering", async (ctx) => {
    if (d === undefined) return ctx.skip();
    const { balancer } = d;
    await d.replicas[2]?.stop();
    let states = await balancer.servers();
    for (let i = 0; i < 200 && states[2]?.status !== "DOWN"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      states = await balancer.servers();
    }
    expect(states.map((s) => s.status)).toEqual(["UP", "UP", "DOWN"]);
    for (let i = 0; i < 4; i++) expect(await throughFront(PUBLIC)).toBe(200);
  });
});
