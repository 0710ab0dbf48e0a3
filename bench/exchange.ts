/**
 * `npm run bench:exchange`: one submission's HTTP exchange with the sandbox (its own process, over
 * loopback), through the runtime's fetch and through the client's node:http exchange
 * (src/client/node-exchange.ts), interleaved with a 2 ms pause before each, as a server idles
 * between calls. `BENCH_EXCHANGES` sets the count per side (default 300).
 */
import { randomUUID } from "node:crypto";
import { exchange } from "../src/client/node-exchange.js";
import { SANDBOX_API_KEY } from "../src/sandbox/sandbox.js";
import { isolatedEnv, startSandboxCli } from "../test/helpers/cli.js";
import { median, ms, percentile, print, time } from "./stats.js";

const COUNT = Number(process.env.BENCH_EXCHANGES ?? 300);
const pause = () => new Promise((resolve) => setTimeout(resolve, 2));

async function main(): Promise<void> {
  const iso = isolatedEnv();
  const sandbox = await startSandboxCli(iso.env);
  const url = new URL(`${sandbox.url}/api/generate/image`);
  const headers = () => ({
    authorization: `Bearer ${SANDBOX_API_KEY}`,
    "content-type": "application/json",
    accept: "application/json",
    "idempotency-key": randomUUID(),
  });
  const body = () => JSON.stringify({ model: "sandbox-image-fast", prompt: `exchange ${randomUUID()}` });
  const sides = {
    fetch: async () => {
      const res = await fetch(url, { method: "POST", headers: headers(), body: body() });
      if (!res.ok) throw new Error(`fetch: HTTP ${res.status}`);
      await res.text();
    },
    "node:http": async () => {
      const res = await exchange(url, {
        method: "POST",
        headers: headers(),
        body: body(),
        signal: AbortSignal.timeout(10_000),
      });
      if (res.status >= 300) throw new Error(`node:http: HTTP ${res.status}`);
    },
  };
  const times: Record<keyof typeof sides, number[]> = { fetch: [], "node:http": [] };
  try {
    for (let i = 0; i < 30; i++) for (const run of Object.values(sides)) await run();
    for (let i = 0; i < COUNT; i++) {
      for (const [name, run] of Object.entries(sides) as Array<[keyof typeof sides, () => Promise<void>]>) {
        await pause();
        times[name].push(await time(run));
      }
    }
  } finally {
    await sandbox.stop();
    iso.cleanup();
  }
  print(
    `submission exchange with the sandbox over loopback, ${COUNT} each, interleaved, 2 ms pause before each`,
  );
  for (const [name, t] of Object.entries(times))
    print(`    ${name.padEnd(10)} median ${ms(median(t))}, p99 ${ms(percentile(t, 99))}`);
  print(`    fetch - node:http, medians: ${ms(median(times.fetch) - median(times["node:http"]))}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
