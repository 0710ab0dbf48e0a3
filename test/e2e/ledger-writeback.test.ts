/**
 * The shipped binary whose ledger file is deleted while a request is uncertain: the open
 * connection's records are written back to the path (said on stderr and in the refusal), so the
 * identical call after a restart resumes the same identity and the service replays the one task
 * it made, instead of a new identity that would be charged again. Against `generation-mcp sandbox`
 * over loopback, whose injected fault makes the service do the work and lose the answer.
 */
import { existsSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { CLI, type ConnectedCli, connectCli, isolatedEnv, startSandboxCli } from "../helpers/cli.js";

type Result = { isError?: boolean; content?: unknown; structuredContent?: Record<string, unknown> };
const textOf = (r: Result): string =>
  ((r.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");

const iso = isolatedEnv();
let sandbox: Awaited<ReturnType<typeof startSandboxCli>>;
beforeAll(async () => {
  sandbox = await startSandboxCli(iso.env);
}, 30_000);
afterAll(async () => {
  await sandbox?.stop();
  iso.cleanup();
});

const serverEnv = () => ({
  ...iso.env,
  GENERATION_BASE_URL: sandbox.url,
  GENERATION_API_KEY: SANDBOX_API_KEY,
});
const ARGS = { model: "sandbox-image-fast", prompt: "a lighthouse at dusk", wait: 0 };

/**
 * A generate_image whose every answer the service loses after making the task (503s with the work
 * committed), so its record stays uncertain; returns the identity the refusal names. The faults
 * are cleared after it.
 */
async function lostCall(client: ConnectedCli["client"], args: Record<string, unknown>): Promise<string> {
  const faults = `${sandbox.url}/sandbox/faults`;
  const auth = { authorization: `Bearer ${SANDBOX_API_KEY}` };
  const r = await fetch(faults, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({
      route: "POST /api/generate/image",
      fault: { status: 503, commit: true },
      times: 100,
    }),
  });
  expect(r.status).toBe(201);
  const lost = (await client.callTool({ name: "generate_image", arguments: args })) as Result;
  expect(lost.isError, textOf(lost)).toBe(true);
  const identity = /gm-[a-z0-9]+-[0-9a-f]{16}/.exec(textOf(lost))?.[0] ?? "";
  expect(identity, textOf(lost)).not.toBe("");
  await fetch(faults, { method: "DELETE", headers: auth });
  return identity;
}

/** Deletes the SQLite ledger file and its journal files, as a user clearing the directory would. */
const deleteLedger = (file: string): void => {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) unlinkSync(f);
};

it("writes an uncertain record back when the file is deleted, and a restart resumes its identity", async () => {
  const file = join(iso.dir, "ledger.sqlite");
  const first = await connectCli({ args: [CLI], env: serverEnv(), name: "writeback-1" });
  let identity: string;
  try {
    // The service makes the task and every answer is lost: the record stays uncertain.
    identity = await lostCall(first.client, ARGS);
    deleteLedger(file);
    const refused = (await first.client.callTool({ name: "generate_image", arguments: ARGS })) as Result;
    expect(refused.isError).toBe(true);
    const text = textOf(refused);
    expect(text).toMatch(/^LEDGER_FILE_GONE: /);
    expect(text).toContain(
      `${file} was deleted while the server ran; the requests it recorded were written back to ${file}`,
    );
    expect(text).toMatch(/Next: Restart the MCP server: it reopens .* resumes its earlier identity/);
    expect(first.stderr()).toContain(
      `generation-mcp: the ledger file ${file} was deleted while the server ran; the requests it recorded were written back to ${file} from the open connection. Paid calls are refused until the server restarts`,
    );
    expect(existsSync(file)).toBe(true);
  } finally {
    await first.client.close();
  }

  const second = await connectCli({ args: [CLI], env: serverEnv(), name: "writeback-2" });
  try {
    const listed = (await second.client.callTool({ name: "list_requests", arguments: {} })) as Result;
    expect(textOf(listed)).toContain(identity);
    const resumed = (await second.client.callTool({ name: "generate_image", arguments: ARGS })) as Result;
    expect(resumed.isError, textOf(resumed)).toBeFalsy();
    const sc = resumed.structuredContent as { idempotencyKey: string; created: boolean };
    expect(sc.idempotencyKey).toBe(identity);
    // The service answered with the task that identity already made (200, created false): no
    // second task, no second charge.
    expect(sc.created, textOf(resumed)).toBe(false);
  } finally {
    await second.client.close();
  }
}, 60_000);

it("writes the records back at shutdown when no paid call came after the deletion", async () => {
  const file = join(iso.dir, "ledger.sqlite");
  deleteLedger(file);
  const args = { ...ARGS, prompt: "a harbour at dawn" };
  const first = await connectCli({ args: [CLI], env: serverEnv(), name: "writeback-3" });
  let identity: string;
  try {
    identity = await lostCall(first.client, args);
    deleteLedger(file);
  } finally {
    // The host stops the server (stdin closes): the ledger closes, and writes its records back.
    await first.client.close();
  }
  expect(first.stderr()).toContain(`the requests it recorded were written back to ${file}`);
  expect(existsSync(file)).toBe(true);

  const second = await connectCli({ args: [CLI], env: serverEnv(), name: "writeback-4" });
  try {
    const resumed = (await second.client.callTool({ name: "generate_image", arguments: args })) as Result;
    expect(resumed.isError, textOf(resumed)).toBeFalsy();
    expect(resumed.structuredContent).toMatchObject({ idempotencyKey: identity, created: false });
  } finally {
    await second.client.close();
  }
}, 60_000);
