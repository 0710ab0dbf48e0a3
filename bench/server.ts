/**
 * `npm run bench`: the server's own costs, against the sandbox, on the built CLI (dist/).
 *  (a) cold start: spawn of `node dist/cli.js --sandbox` to tools/list answered over stdio (median);
 *  (b) list_models through MCP over stdio against a direct fetch to the same sandbox (ratio of means),
 *      on bare loopback and with a service round trip added by a delaying proxy;
 *  (c) 100 concurrent Streamable HTTP sessions calling list_models: throughput and p99 latency.
 * The sandbox runs in its own process (`generation-mcp sandbox`), so it does not share an event loop
 * with either side being measured. Run `npm run build` first.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SANDBOX_API_KEY } from "../src/sandbox/index.js";
import { CLI, isolatedEnv, startHttpCli } from "../test/server/spawn.js";

const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 10);
const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const CALLS_PER_SESSION = Number(process.env.BENCH_CALLS_PER_SESSION ?? 10);
const COLD_TARGET_MS = 350;
const RATIO_TARGET = 1.1;
const DELAY_MS = Number(process.env.BENCH_SERVICE_DELAY_MS ?? 20);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const print = (line: string) => process.stdout.write(`${line}\n`);
const ms = (x: number) => `${x.toFixed(1)} ms`;

const MINIMAL = fileURLToPath(new URL("./minimal-server.mjs", import.meta.url));

/** One cold start: raw JSON-RPC lines, so client-library start-up is not counted. */
function coldStart(env: Record<string, string>, args = [CLI, "--sandbox"]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes('"id":2')) {
        const elapsed = performance.now() - started;
        child.stdin.end();
        child.once("exit", () => resolve(elapsed));
      }
    });
    child.once("error", reject);
    const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  });
}

/** `generation-mcp sandbox --port 0` in its own process; resolves with its base URL. */
function startSandbox(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "sandbox", "--port", "0"], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const match = /GENERATION_BASE_URL=(\S+)/.exec(out);
      if (match?.[1] !== undefined) resolve({ url: match[1], child });
    });
    child.once("exit", (code) => reject(new Error(`sandbox exited with ${code}`)));
  });
}

/** Mean time of list_models through the stdio server vs a direct fetch, both against `serviceUrl`. */
async function overhead(
  serviceUrl: string,
  env: Record<string, string>,
): Promise<{ mcp: number; direct: number; ratio: number }> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI], env }));
  const direct = () =>
    fetch(`${serviceUrl}/api/generate/models`, {
      headers: { authorization: `Bearer ${SANDBOX_API_KEY}` },
    }).then((r) => r.json());
  const viaMcp = async () => {
    const r = await client.callTool({ name: "list_models", arguments: {} });
    if (r.isError) throw new Error(`list_models failed: ${JSON.stringify(r.content)}`);
  };
  try {
    for (let i = 0; i < 30; i++) {
      await direct();
      await viaMcp();
    }
    const directTimes: number[] = [];
    const mcpTimes: number[] = [];
    // Interleaved, so drift in machine load hits both sides alike.
    for (let i = 0; i < CALLS; i++) {
      directTimes.push(await time(direct));
      mcpTimes.push(await time(viaMcp));
    }
    return { mcp: mean(mcpTimes), direct: mean(directTimes), ratio: mean(mcpTimes) / mean(directTimes) };
  } finally {
    await client.close();
  }
}

/** A loopback proxy that holds each request DELAY ms before forwarding it: a service some distance away. */
async function delayProxy(target: string, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    setTimeout(() => {
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
          agent,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on("error", () => res.destroy());
      req.pipe(out);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error("dist/cli.js is missing: run `npm run build` first");
  const iso = isolatedEnv();
  const sandbox = await startSandbox(iso.env);
  const serviceEnv = { ...iso.env, GENERATION_BASE_URL: sandbox.url, GENERATION_API_KEY: SANDBOX_API_KEY };
  try {
    // (a) cold start, alternating with a minimal SDK server so both see the same machine load
    await coldStart(iso.env); // warms the OS file cache; not counted
    await coldStart(iso.env, [MINIMAL]);
    const colds: number[] = [];
    const floors: number[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      colds.push(await coldStart(iso.env));
      floors.push(await coldStart(iso.env, [MINIMAL]));
    }
    const cold = median(colds);
    const floor = median(floors);
    print(`(a) cold start, spawn to tools/list answered (stdio, --sandbox), median of ${COLD_RUNS}`);
    print(
      `    ${ms(cold)}  (min ${ms(Math.min(...colds))}, max ${ms(Math.max(...colds))}; target < ${COLD_TARGET_MS} ms: ${cold < COLD_TARGET_MS ? "met" : "NOT met"})`,
    );
    print(
      `    minimal SDK server with one tool, same run: ${ms(floor)}; ours is ${(cold / floor).toFixed(2)}x that floor`,
    );

    // (b) list_models: MCP over stdio vs a direct fetch to the same sandbox, first on bare loopback
    // (the stringent figure: the service answers in about a millisecond), then with a service round
    // trip of DELAY_MS added by a proxy in front of the sandbox (closer to a real service).
    const bare = await overhead(sandbox.url, { ...serviceEnv });
    print(
      `(b) list_models, ${CALLS} calls each, interleaved: MCP over stdio vs direct fetch to the same sandbox`,
    );
    print(
      `    loopback:     MCP mean ${ms(bare.mcp)}, direct mean ${ms(bare.direct)}: ratio ${bare.ratio.toFixed(2)} (target <= ${RATIO_TARGET}: ${bare.ratio <= RATIO_TARGET ? "met" : "NOT met"}); overhead ${ms(bare.mcp - bare.direct)} per call`,
    );
    const proxy = await delayProxy(sandbox.url, DELAY_MS);
    try {
      const far = await overhead(proxy.url, { ...serviceEnv, GENERATION_BASE_URL: proxy.url });
      print(
        `    +${DELAY_MS} ms service: MCP mean ${ms(far.mcp)}, direct mean ${ms(far.direct)}: ratio ${far.ratio.toFixed(2)} (target <= ${RATIO_TARGET}: ${far.ratio <= RATIO_TARGET ? "met" : "NOT met"}); overhead ${ms(far.mcp - far.direct)} per call`,
      );
    } finally {
      await proxy.close();
    }

    // (c) 100 concurrent HTTP sessions
    const http = await startHttpCli([], serviceEnv);
    try {
      const clients = await Promise.all(
        Array.from({ length: SESSIONS }, async () => {
          const c = new Client({ name: "bench", version: "1.0.0" });
          await c.connect(new StreamableHTTPClientTransport(new URL(http.url)));
          return c;
        }),
      );
      await Promise.all(clients.map((c) => c.callTool({ name: "list_models", arguments: {} })));
      const latencies: number[] = [];
      const started = performance.now();
      await Promise.all(
        clients.map(async (c) => {
          for (let i = 0; i < CALLS_PER_SESSION; i++) {
            latencies.push(
              await time(async () => {
                const r = await c.callTool({ name: "list_models", arguments: {} });
                if (r.isError) throw new Error("list_models failed over HTTP");
              }),
            );
          }
        }),
      );
      const elapsed = (performance.now() - started) / 1000;
      await Promise.all(clients.map((c) => c.close()));
      print(`(c) ${SESSIONS} concurrent HTTP sessions x ${CALLS_PER_SESSION} list_models calls`);
      print(
        `    throughput ${(latencies.length / elapsed).toFixed(0)} calls/s, p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}`,
      );
    } finally {
      await http.stop();
    }
  } finally {
    sandbox.child.kill("SIGTERM");
    iso.cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
