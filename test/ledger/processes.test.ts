/**
 * Crashes and concurrency across real processes: a child submits through the ledger to a loopback
 * receiver and is SIGKILLed at the worst moments; restarted with the same call it must resume the
 * same identity with the same bytes, and the work must be dispatched exactly once.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildMediaBody } from "../../src/client/requests.js";
import { hashKey, openLedger } from "../../src/ledger/open-ledger.js";
import { createSandbox, SANDBOX_API_KEY, type Sandbox } from "../../src/sandbox/sandbox.js";
import { type Receiver, startReceiver } from "./fixtures/receiver.js";
import { tempDir } from "./ledger-helpers.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const FIXTURE = join(ROOT, "test/ledger/fixtures/submit.ts");
const API_KEY = SANDBOX_API_KEY;
const keyHash = hashKey(API_KEY);
const BODY = buildMediaBody("image", { model: "sandbox-image-fast", prompt: "a lighthouse at dusk" }).bytes;
const ROUTE = "POST /api/generate/image";

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: { identity?: string; reused?: boolean; taskId?: string; error?: string; code?: string };
  stderr: string;
}

function submitChild(env: Record<string, string>, ipc = false): { cp: ChildProcess; exit: Promise<Exit> } {
  const cp = spawn(process.execPath, ["--import", "tsx", FIXTURE], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  cp.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  cp.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exit = new Promise<Exit>((res) =>
    cp.on("exit", (code, signal) => {
      const line = stdout.trim().split("\n").pop() ?? "";
      res({ code, signal, out: line.startsWith("{") ? JSON.parse(line) : {}, stderr });
    }),
  );
  return { cp, exit };
}

/** A child that exits while the test waits for it: fail now, with its stderr, not at the timeout. */
const early = (e: Exit): never => {
  throw new Error(`child exited early (${e.code ?? e.signal}): ${e.stderr}`);
};

let t: ReturnType<typeof tempDir>;
let sandbox: Sandbox;
let receiver: Receiver;
let env: Record<string, string>;
beforeEach(async () => {
  t = tempDir();
  sandbox = createSandbox({ seed: "ledger" });
  receiver = await startReceiver(sandbox);
  env = { LEDGER_STORE: t.uri, LEDGER_URL: receiver.url, LEDGER_API_KEY: API_KEY, LEDGER_BODY: BODY };
});
afterEach(async () => {
  await sandbox.close();
  await receiver.close();
  t.cleanup();
});

/** Reads every ledger file byte by byte; returns the names it checked. */
function expectNoKeyIn(dir: string): string[] {
  const files = readdirSync(dir).filter((f) => f.startsWith("ledger.sqlite"));
  for (const f of files) {
    const bytes = readFileSync(join(dir, f));
    expect(bytes.includes(API_KEY), f).toBe(false);
    expect(bytes.includes(API_KEY.slice(4)), f).toBe(false);
  }
  return files;
}

async function records() {
  const ledger = await openLedger({ storeUri: t.uri });
  try {
    return await ledger.list(keyHash);
  } finally {
    await ledger.close();
  }
}

describe("crash recovery (SIGKILL)", () => {
  it("killed after the commit and before the send: the restart sends once, same identity, same bytes", async () => {
    const crashed = await submitChild({ ...env, LEDGER_CRASH: "before-send" }).exit;
    expect(crashed.signal).toBe("SIGKILL");
    expect(receiver.requests).toHaveLength(0);
    const [rec] = await records();
    // The claim is the durable commit; the `sent` mark is queued behind it and may not have landed.
    expect(["prepared", "sent"]).toContain(rec?.state);
    const identity = rec?.idempotencyKey;
    const attempts = rec?.attempts ?? -1;

    const restarted = await submitChild(env).exit;
    expect(restarted.stderr).toBe("");
    expect(restarted.out).toMatchObject({ identity, reused: true, taskId: expect.stringMatching(/^task_/) });
    expect(receiver.requests).toEqual([{ identity, body: BODY, authorization: `Bearer ${API_KEY}` }]);
    expect(sandbox.stats.dispatches(ROUTE)).toBe(1);
    expect((await records())[0]).toMatchObject({
      idempotencyKey: identity,
      state: "succeeded",
      attempts: attempts + 1,
    });
  });

  it("killed after the send, before the answer: the restart replays the same identity and bytes, one dispatch", async () => {
    sandbox.faults.inject(ROUTE, { kind: "hang" });
    const first = submitChild(env);
    await Promise.race([receiver.waitForRequests(1), first.exit.then(early)]);
    // The `sent` mark is queued beside the request, not ahead of it (see the ledger's run loop): on a
    // loaded machine the request can arrive first. The service hangs, so give the mark time to land.
    const deadline = Date.now() + 3_000;
    while ((await records())[0]?.state !== "sent" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    first.cp.kill("SIGKILL");
    expect((await first.exit).signal).toBe("SIGKILL");
    expect(expectNoKeyIn(t.dir)).toContain("ledger.sqlite-wal");
    const [rec] = await records();
    expect(rec).toMatchObject({ state: "sent", attempts: 1 });
    const identity = rec?.idempotencyKey;
    expect(receiver.requests[0]?.identity).toBe(identity);

    const restarted = await submitChild(env).exit;
    expect(restarted.out).toMatchObject({ identity, reused: true, taskId: expect.stringMatching(/^task_/) });
    expect(receiver.requests.map((r) => r.identity)).toEqual([identity, identity]);
    expect(receiver.requests.map((r) => r.body)).toEqual([BODY, BODY]);
    expect(sandbox.stats.requests(ROUTE)).toBe(2);
    expect(sandbox.stats.dispatches(ROUTE)).toBe(1);

    // The key went to the service only: no byte of it is in the ledger's files (main file now
    // checkpointed; the WAL was checked above, while the killed child's log was still there).
    expectNoKeyIn(t.dir);
    expect(readFileSync(join(t.dir, "ledger.sqlite")).includes(keyHash)).toBe(true);
  });
});

describe("two processes on one SQLite file", () => {
  it.each([
    ["an identical call", {}],
    ["an explicit idempotencyKey", { LEDGER_IDEMPOTENCY_KEY: "shared-key-1" }],
  ])("cannot both claim one identity: %s", async (_, extra) => {
    const children = Array.from({ length: 4 }, () =>
      submitChild({ ...env, ...extra, LEDGER_BARRIER: "1" }, true),
    );
    await Promise.all(
      children.map(({ cp, exit }) =>
        Promise.race([new Promise<void>((res) => cp.once("message", () => res())), exit.then(early)]),
      ),
    );
    for (const { cp } of children) cp.send("go");
    const exits = await Promise.all(children.map((c) => c.exit));
    for (const e of exits) expect(e.code, e.stderr).toBe(0);
    const identities = new Set(exits.map((e) => e.out.identity));
    expect(identities.size).toBe(1);
    if ("LEDGER_IDEMPOTENCY_KEY" in extra) expect([...identities]).toEqual([extra.LEDGER_IDEMPOTENCY_KEY]);
    expect(exits.filter((e) => e.out.reused === false)).toHaveLength(1);
    expect(sandbox.stats.dispatches(ROUTE)).toBe(1);
    expect(await records()).toHaveLength(1);
  });
});
