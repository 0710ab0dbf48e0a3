/**
 * The ledger as the user reads it, through the shipped binary on stdio against `generation-mcp
 * sandbox` over loopback: list_requests names a submission the service took "accepted" and shows
 * its task's last status beside it (queued, then failed) and lists it in state `open` while no read
 * has seen it finish, a closed request's reason is in the text,
 * the task resources say the same, recover_lost_work lists a delivered task no one saw finish, and
 * the next steps point the right way (poll_task given an identity, list_voices' next page, an
 * unknown voice).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_MARKERS } from "../../src/sandbox/tasks.js";
import { connectSandboxedCli, type SandboxedCli } from "../helpers/sandboxed-cli.js";

type Result = { isError?: boolean; content?: unknown; structuredContent?: Record<string, unknown> };
type Listed = {
  idempotencyKey: string;
  state: string;
  taskId?: string;
  taskStatus?: string;
  closedReason?: { code: string };
};
const textOf = (r: Result): string =>
  ((r.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");

let cli: SandboxedCli;
beforeAll(async () => {
  cli = await connectSandboxedCli("ledger-view");
}, 30_000);
afterAll(() => cli?.close());

const call = async (name: string, args: Record<string, unknown>): Promise<Result> =>
  (await cli.client.callTool({ name, arguments: args })) as Result;
const list = async (args: Record<string, unknown> = {}) => {
  const r = await call("list_requests", args);
  return { text: textOf(r), requests: (r.structuredContent as { requests: Listed[] }).requests };
};
const recoverText = async (): Promise<string> => {
  const p = await cli.client.getPrompt({ name: "recover_lost_work", arguments: {} });
  return p.messages.map((m) => (m.content.type === "text" ? m.content.text : "")).join("\n");
};

describe("the ledger as the user reads it", () => {
  let identity = "";
  let taskId = "";

  it("an accepted submission shows its task's last status, not 'succeeded'", async () => {
    const r = await call("generate_image", {
      model: "sandbox-image-fast",
      prompt: `a harbour at dawn ${SANDBOX_MARKERS.fail}`,
      wait: 0,
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    ({ idempotencyKey: identity } = r.structuredContent as { idempotencyKey: string });
    taskId = (r.structuredContent as { task: { id: string; status: string } }).task.id;

    const { text, requests } = await list();
    expect(requests[0]).toMatchObject({
      idempotencyKey: identity,
      state: "accepted",
      taskId,
      taskStatus: "queued",
    });
    expect(text).toContain(`- ${identity} generate_image (sandbox-image-fast "a harbour at dawn`);
    expect(text).toContain(`accepted by the service: task ${taskId}, queued when last read (`);
    expect(text).not.toMatch(/succeeded/);
    // `open` is what is left to pick up: this task is queued, though its answer was delivered.
    const open = await list({ state: "open" });
    expect(open.requests.map((x) => x.idempotencyKey)).toEqual([identity]);
    expect(open.text).toMatch(/^1 request in state open, newest first\./);
    // The earlier name of the state still filters.
    for (const state of ["accepted", "succeeded"]) {
      expect((await list({ state })).requests.map((x) => x.idempotencyKey)).toEqual([identity]);
    }

    const { resources } = await cli.client.listResources();
    const task = resources.find((x) => x.uri === `generation://tasks/${taskId}`);
    expect(task?.description).toContain(`accepted by the service: task ${taskId}, queued when last read`);
  });

  it("recover_lost_work lists a delivered task not known finished, until a read sees it finish", async () => {
    const before = await recoverText();
    expect(before).toContain(
      `- ${identity}: generate_image sandbox-image-fast, accepted by the service: task ${taskId}, queued`,
    );
    expect(before).toMatch(/even one whose first answer arrived/);

    const polled = await call("poll_task", { taskId, wait: 60 });
    expect((polled.structuredContent as { task: { status: string } }).task.status).toBe("failed");
    expect(textOf(polled)).toContain(`Task ${taskId} has failed`);
    const { text, requests } = await list();
    expect(requests[0]).toMatchObject({ state: "accepted", taskStatus: "failed" });
    expect(text).toContain(`task ${taskId}, failed when last read (`);
    expect(await recoverText()).not.toContain(identity);
    expect((await list({ state: "open" })).requests).toEqual([]);
  }, 90_000);

  it("poll_task given a request identity points to its task, or to list_requests", async () => {
    const r = await call("poll_task", { taskId: identity });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^NOT_FOUND: /);
    expect(textOf(r)).toContain(
      `Next: "${identity}" is the identity (idempotencyKey) of a request to generate_image, not a task ID; its task is ${taskId}: call poll_task with {"taskId": "${taskId}"}.`,
    );
    const unknown = "gm-mz00000-0123456789abcdef";
    expect(textOf(await call("poll_task", { taskId: unknown }))).toContain(
      `call list_requests with {"idempotencyKey": "${unknown}"} for its task ID`,
    );
  });

  it("a closed request gives its reason in the text", async () => {
    const r = await call("generate_image", {
      model: "sandbox-image-pro",
      prompt: "a lighthouse",
      maxGems: 1,
      wait: 0,
    });
    expect(textOf(r)).toMatch(/^PRICE_CHANGED: /);
    const { text, requests } = await list({ state: "closed" });
    expect(requests[0]?.closedReason?.code).toBe("PRICE_CHANGED");
    expect(text).toMatch(
      /generate_image \(sandbox-image-pro "a lighthouse"\): closed, PRICE_CHANGED \(HTTP \d+\): POST \/api\/generate\/image: The quote is \d+ Gems, above maxGems 1\. Approve a higher maxGems to proceed\. Updated /,
    );
  });
});

describe("next steps that point the right way", () => {
  it("list_voices with more pages names the next one, and not past the last", async () => {
    const first = textOf(await call("list_voices", { scope: "explore" }));
    expect(first).toContain("More: call list_voices with page: 2 (same scope and language)");
    const last = textOf(await call("list_voices", { scope: "explore", page: 3 }));
    expect(last).not.toContain("More:");
  });

  it("an unknown speech voice points to list_voices and upload_voice, not upload_asset", async () => {
    const r = await call("generate_audio", {
      model: "service-voice",
      operation: "speech",
      prompt: "Hello there.",
      parameters: { voiceProfileId: "voice_nope" },
      wait: 0,
    });
    const text = textOf(r);
    expect(text).toMatch(/^INVALID_REFERENCE: /);
    expect(text).toContain("call list_voices");
    expect(text).toContain("upload_voice");
    expect(text).not.toContain("upload_asset");
  });
});
