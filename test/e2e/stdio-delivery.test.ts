/**
 * The built CLI over stdio: a result is marked delivered only after its stdout write completed (a
 * SIGKILL while the write is stuck leaves the record undelivered, and the identical call after a
 * restart replays the same identity, one dispatch), and one oversized message is refused without
 * ending the server.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, constants, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { CLI, isolatedEnv, rawStdio } from "../helpers/cli.js";

const IMAGE = "POST /api/generate/image";
const ARGS = { model: "sandbox-image-fast", prompt: "[sandbox:slow] a harbour at dusk", wait: 5 };

interface Message {
  id?: number | string | null;
  result?: { structuredContent?: Record<string, unknown>; isError?: boolean };
  error?: { code: number; message: string };
}

/** JSON-RPC over a child's stdin/stdout, line by line. */
function speak(child: ChildProcess) {
  const seen: Message[] = [];
  let buffer = "";
  child.stdout?.on("data", (c: Buffer) => {
    buffer += c.toString();
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
      seen.push(JSON.parse(buffer.slice(0, nl)) as Message);
      buffer = buffer.slice(nl + 1);
    }
  });
  const send = (m: object) => child.stdin?.write(`${JSON.stringify(m)}\n`);
  const reply = async (id: number, ms = 20_000): Promise<Message> => {
    const end = Date.now() + ms;
    for (;;) {
      const found = seen.find((m) => m.id === id);
      if (found) return found;
      if (Date.now() > end) throw new Error(`no reply to ${id}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const call = (id: number, name: string, args: object) =>
    send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return { send, reply, call };
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A FIFO's capacity, measured: write to a fresh one without blocking until it refuses. */
function pipeCapacity(dir: string): number {
  const path = join(dir, "capacity.fifo");
  execFileSync("mkfifo", [path]);
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  const page = Buffer.alloc(4096);
  let size = 0;
  try {
    for (;;) size += writeSync(writer, page);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
  } finally {
    closeSync(writer);
    closeSync(reader);
  }
  return size;
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((r) => child.once("exit", () => r()));

let sandbox: Sandbox;
let serviceUrl: string;
let closeService: () => Promise<void>;

beforeAll(async () => {
  sandbox = createSandbox({ timeScale: 50 });
  const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  serviceUrl = listening.url;
  closeService = listening.close;
});
afterAll(async () => {
  await closeService?.();
  await sandbox?.close();
});

/** A fresh key and ledger, and the CLI as a host would start it. */
function setup() {
  const key = sandbox.addKey({ scopes: ["read", "generate"] });
  const iso = isolatedEnv({ GENERATION_BASE_URL: serviceUrl, GENERATION_API_KEY: key });
  const start = () => spawn(process.execPath, [CLI], { env: iso.env, stdio: ["pipe", "pipe", "pipe"] });
  return { iso, start };
}

/** After a restart: this key's one record, and what the identical call does with it. */
async function afterRestart(start: () => ChildProcess) {
  const child = start();
  const rpc = speak(child);
  await rpc.reply(1);
  rpc.call(2, "list_requests", {});
  const listed = (await rpc.reply(2)).result?.structuredContent as {
    requests: Array<{ idempotencyKey: string; delivered?: boolean; state: string }>;
  };
  rpc.call(3, "generate_image", { ...ARGS, wait: 0 });
  const again = (await rpc.reply(3)).result?.structuredContent as { idempotencyKey: string };
  child.kill("SIGKILL");
  await exited(child);
  return { records: listed.requests, again };
}

describe("stdio delivery (built CLI)", () => {
  it("marks a result delivered once its write completed: after a SIGKILL the identical call is new work", async () => {
    const { iso, start } = setup();
    try {
      const before = sandbox.stats.dispatches(IMAGE);
      const child = start();
      const rpc = speak(child);
      await rpc.reply(1);
      rpc.call(2, "generate_image", ARGS);
      expect((await rpc.reply(2)).result?.isError).toBeFalsy();
      await new Promise((r) => setTimeout(r, 500));
      child.kill("SIGKILL");
      await exited(child);

      const { records, again } = await afterRestart(start);
      expect(records).toHaveLength(1);
      expect(records[0]?.delivered).toBe(true);
      expect(again.idempotencyKey).not.toBe(records[0]?.idempotencyKey);
      expect(sandbox.stats.dispatches(IMAGE)).toBe(before + 2);
    } finally {
      iso.cleanup();
    }
  });

  it("leaves a result undelivered when the write never completed: the identical call replays the same identity, one dispatch", async () => {
    const { iso, start } = setup();
    // stdout is a FIFO (a real pipe, 64 KiB) read by `cat`, which the test stops to stall writes.
    const fifo = join(iso.dir, "stdout.fifo");
    execFileSync("mkfifo", [fifo]);
    // (A background job's stdin is /dev/null unless redirected from a saved descriptor.)
    const script = 'exec 3<&0; node "$CLI_PATH" <&3 3<&- >"$FIFO" & echo "$!" >&2; exec cat "$FIFO" 3<&-';
    const relay = spawn("sh", ["-c", script], {
      env: { ...iso.env, CLI_PATH: CLI, FIFO: fifo },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let cliPid = 0;
    relay.stderr.on("data", (c: Buffer) => {
      cliPid ||= Number.parseInt(c.toString(), 10);
    });
    try {
      const before = sandbox.stats.dispatches(IMAGE);
      const rpc = speak(relay);
      await rpc.reply(1);
      await until(() => cliPid > 0);
      process.kill(relay.pid ?? 0, "SIGSTOP");
      rpc.call(2, "generate_image", ARGS);
      // Fill the pipe to within 2 KB of its capacity, with answers to pings (41 bytes each), so
      // the result (several KB) cannot be written whole.
      const pings = Math.floor((pipeCapacity(iso.dir) - 2_000) / 41);
      for (let id = 10_000; id < 10_000 + pings; id++) rpc.send({ jsonrpc: "2.0", id, method: "ping" });
      await until(() => sandbox.stats.dispatches(IMAGE) === before + 1);
      // The slow task ends within about 1.2 s; the first poll comes at about 2 s.
      await new Promise((r) => setTimeout(r, 4_000));
      process.kill(cliPid, "SIGKILL");
      process.kill(relay.pid ?? 0, "SIGCONT");
      relay.kill("SIGKILL");
      await exited(relay);

      const { records, again } = await afterRestart(start);
      expect(records).toHaveLength(1);
      expect(records[0]?.delivered).toBe(false);
      expect(again.idempotencyKey).toBe(records[0]?.idempotencyKey);
      expect(sandbox.stats.dispatches(IMAGE)).toBe(before + 1);
    } finally {
      if (cliPid > 0) {
        try {
          process.kill(cliPid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      iso.cleanup();
    }
  });
});

describe("stdio oversized message (built CLI)", () => {
  it("refuses one message over 48 MiB with a JSON-RPC error and keeps serving the next line", async () => {
    const iso = isolatedEnv();
    const { child, send, stdout } = rawStdio(iso.env);
    try {
      const huge = "A".repeat(49 * 1024 * 1024);
      child.stdin.write(
        `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"upload_asset","arguments":{"data":"${huge}","mimeType":"image/png"}}}\n`,
      );
      send({ jsonrpc: "2.0", id: 8, method: "ping" });
      await until(() => stdout().includes('"id":8'), 30_000);
      const lines = stdout()
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Message);
      const refused = lines.find((m) => m.id === 7);
      expect(refused?.error?.code).toBe(-32600);
      expect(refused?.error?.message).toContain(String(48 * 1024 * 1024));
      expect(lines.find((m) => m.id === 8)?.result).toEqual({});
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill();
      await exited(child);
      iso.cleanup();
    }
  });
});
