/**
 * `npx tsx bench/transport.ts` (after `npm run build`): the built CLI over Streamable HTTP against a
 * sandbox on loopback.
 *
 * 1. list_requests with 1,000 records for the key: the default page's size and latency, a page of
 *    100, and a lookup by task ID (median of 20 calls each).
 * 2. Graceful shutdown: from SIGTERM to the answer of a call waiting on a slow task (5 runs).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { hashKey, openLedger } from "../src/ledger/open-ledger.js";
import { createSandbox } from "../src/sandbox/sandbox.js";
import { isolatedEnv, startHttpCli } from "../test/helpers/cli.js";

const RECORDS = Number(process.env.BENCH_RECORDS ?? 1_000);
const print = (line: string) => process.stdout.write(`${line}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function connect(url: string, key: string): Promise<Client> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

async function timed(client: Client, args: Record<string, unknown>): Promise<{ ms: number; bytes: number }> {
  const samples: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    const result = await client.callTool({ name: "list_requests", arguments: args });
    samples.push(performance.now() - t0);
    bytes = JSON.stringify(result).length;
  }
  return { ms: median(samples), bytes };
}

async function listing(serviceUrl: string, key: string): Promise<void> {
  const iso = isolatedEnv({ GENERATION_BASE_URL: serviceUrl });
  const ledger = await openLedger({ storeUri: iso.env.GENERATION_STORE ?? "" });
  for (let i = 0; i < RECORDS; i++) {
    const bytes = JSON.stringify({
      model: "sandbox-image-fast",
      prompt: `harbour ${i}, ${"wide ".repeat(40)}`,
    });
    await ledger.run(
      { keyHash: hashKey(key), tool: "generate_image", endpoint: "/api/generate/image", bytes },
      async () => ({ id: `task_${i}` }),
      (r) => ({ taskId: r.id }),
    );
  }
  await ledger.close();
  const server = await startHttpCli([], iso.env);
  try {
    const client = await connect(server.url, key);
    const page = await timed(client, {});
    const wide = await timed(client, { limit: 100 });
    const lookup = await timed(client, { taskId: `task_${RECORDS / 2}` });
    print(`list_requests, ${RECORDS} records: default page (20) ${page.bytes} B in ${page.ms.toFixed(1)} ms`);
    print(`list_requests, ${RECORDS} records: limit 100 ${wide.bytes} B in ${wide.ms.toFixed(1)} ms`);
    print(`list_requests, ${RECORDS} records: by taskId ${lookup.bytes} B in ${lookup.ms.toFixed(1)} ms`);
    await client.close();
  } finally {
    await server.stop();
    iso.cleanup();
  }
}

async function shutdown(serviceUrl: string, key: string): Promise<void> {
  const took: number[] = [];
  for (let run = 0; run < 5; run++) {
    const iso = isolatedEnv({ GENERATION_BASE_URL: serviceUrl });
    const server = await startHttpCli([], iso.env);
    try {
      const client = await connect(server.url, key);
      const call = client.callTool(
        {
          name: "generate_image",
          arguments: { model: "sandbox-image-fast", prompt: "[sandbox:slow] bench", wait: 120 },
        },
        { timeout: 150_000 },
      );
      await new Promise((r) => setTimeout(r, 1_000));
      const t0 = performance.now();
      server.child.kill("SIGTERM");
      const result = await call;
      took.push(performance.now() - t0);
      if (result.isError) throw new Error("the call in flight was answered with an error");
    } finally {
      await server.stop();
      iso.cleanup();
    }
  }
  print(
    `graceful shutdown: SIGTERM to the in-flight call's answer, median ${median(took).toFixed(0)} ms (max ${Math.max(...took).toFixed(0)} ms, 5 runs)`,
  );
}

const sandbox = createSandbox({ timeScale: 1 });
const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
const key = sandbox.addKey({ scopes: ["read", "generate"] });
try {
  await listing(listening.url, key);
  await shutdown(listening.url, key);
} finally {
  await listening.close();
  await sandbox.close();
}
