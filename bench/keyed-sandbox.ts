/**
 * The sandbox with one key per user, in a process of its own (bench/oauth.ts runs it, so the
 * service shares an event loop with neither side measured): `node --import tsx
 * bench/keyed-sandbox.ts N [timeScale]` prints one JSON line, `{"url": …, "keys": [N keys]}`, and
 * serves until its stdin closes (timeScale 50 unless given: bench/hostile.ts wants slow tasks). Sandbox keys cost nothing and open nothing but this sandbox.
 */
import { createSandbox } from "../src/sandbox/sandbox.js";

const count = Number(process.argv[2] ?? 0);
const sandbox = createSandbox({ timeScale: Number(process.argv[3] ?? 50) });
const keys = Array.from({ length: count }, () => sandbox.addKey({ scopes: ["read", "generate"] }));
const { url, close } = await sandbox.listen();
process.stdout.write(`${JSON.stringify({ url, keys })}\n`);
process.stdin.resume();
process.stdin.on("end", () => {
  void close().finally(() => process.exit(0));
});
