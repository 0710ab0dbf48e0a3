/**
 * What one `await` costs an MCP request once oidc-provider has served a request, in one process:
 * before any, after one served through hooksOnlyWhileServing (src/transports/oauth/provider-hooks.ts,
 * as oauth-gate.ts serves them), and after one served straight through the provider's callback
 * (what the server did before). On Node 22 without --experimental-async-context-frame the last
 * leaves the provider's AsyncLocalStorage, and so the process's promise hooks, on.
 * `npx tsx bench/provider-hooks.ts` (Node as on PATH); the best of 7 runs of 300,000 awaits each.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import { hooksOnlyWhileServing } from "../src/transports/oauth/provider-hooks.js";

const N = 300_000;
const step = async (i: number) => i;

/** ns per iteration: one `await` of an async function and one `.then`, as a request's code does. */
async function awaitCost(): Promise<number> {
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < N; i++) await step(i).then((x) => x);
    runs.push(Number(process.hrtime.bigint() - t) / N);
  }
  return Math.min(...runs);
}

/** Serves one discovery request through `handle` on a loopback port of its own. */
async function serveOne(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}/.well-known/openid-configuration`);
  if (!res.ok) throw new Error(`discovery answered ${res.status}`);
  await res.text();
  server.close();
}

const provider = new Provider("http://127.0.0.1", {});
const callback = provider.callback();
await awaitCost();
const none = await awaitCost();
await serveOne(hooksOnlyWhileServing(callback));
const guarded = await awaitCost();
await serveOne(callback);
const unguarded = await awaitCost();
const ns = (x: number) => `${x.toFixed(0)} ns`;
process.stdout.write(
  `Node ${process.versions.node}${process.env.NODE_OPTIONS ? ` (NODE_OPTIONS=${process.env.NODE_OPTIONS})` : ""}: one await + then costs ${ns(none)} before any provider request, ${ns(guarded)} after one served through hooksOnlyWhileServing, ${ns(unguarded)} after one served without it\n`,
);
