/**
 * On the sessionless 2026-07-28 wire a "yes" is bound to what was asked (the built CLI over
 * loopback HTTP, spoken to with raw JSON-RPC POSTs as a client of that revision sends them):
 * - the input_required result carries a requestState;
 * - an answer with that state is honoured only for the same tool, the exact arguments and the
 *   amount asked about: other arguments, a bare "yes" with no state, a forged state, are asked
 *   again and never honoured;
 * - the honoured yes sends the amount asked about as maxGems.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, type Started, startHttpCli } from "../helpers/cli.js";

const VERSION = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "raw-2026", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
};

type Answer = {
  resultType?: string;
  requestState?: string;
  inputRequests?: Record<string, { method: string; params: { message: string } }>;
  isError?: boolean;
  content?: { type: string; text?: string }[];
  structuredContent?: { idempotencyKey: string; task: { id: string; quotedGems: number } };
};

const iso = isolatedEnv({ GENERATION_CONFIRM_ABOVE_GEMS: "10" });
let http: Started;
let id = 0;

beforeAll(async () => {
  http = await startHttpCli(["--sandbox"], iso.env);
}, 30_000);

afterAll(async () => {
  await http?.stop();
  iso.cleanup();
});

/** One raw tools/call POST of the 2026-07-28 revision; its JSON-RPC result. */
async function call(
  name: string,
  args: Record<string, unknown>,
  round: { inputResponses?: Record<string, unknown>; requestState?: string } = {},
): Promise<Answer> {
  const response = await fetch(http.url, {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-protocol-version": VERSION,
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: ++id,
      method: "tools/call",
      params: { name, arguments: args, ...round, _meta: META },
    }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { result?: Answer; error?: unknown };
  expect(body.error, JSON.stringify(body.error)).toBeUndefined();
  return body.result as Answer;
}

const YES = { spend: { action: "accept", content: { confirm: true } } };
const image = (parameters: Record<string, unknown>, prompt = "bound") => ({
  model: "sandbox-image-pro",
  prompt,
  parameters,
  wait: 0,
});
const small = image({ resolution: "1K", outputCount: 2 });
const large = image({ resolution: "4K", outputCount: 4 });

/** The question of an input_required result, and its state. */
function question(a: Answer): { message: string; state: string } {
  expect(a.resultType, JSON.stringify(a)).toBe("input_required");
  const spend = a.inputRequests?.spend;
  expect(spend?.method).toBe("elicitation/create");
  expect(typeof a.requestState).toBe("string");
  return { message: spend?.params.message ?? "", state: a.requestState ?? "" };
}

describe("a yes on 2026-07-28 counts only for what it was asked about (built CLI, raw HTTP)", () => {
  it("asks with a requestState, and honours the answer only for the same arguments and amount", async () => {
    const asked = question(await call("generate_image", small));
    expect(asked.message).toMatch(/may spend about 16 Gems/);

    // The same yes for other arguments (costing 128 Gems) is asked about again, never honoured.
    const other = question(
      await call("generate_image", large, { inputResponses: YES, requestState: asked.state }),
    );
    expect(other.message).toMatch(/may spend about 128 Gems/);
    // A yes with no question ever asked is asked again.
    question(await call("generate_image", large, { inputResponses: YES }));
    // A forged state (the payload changed, the MAC not) is asked again.
    const [v, body, mac] = asked.state.split(".");
    const forgedBody = Buffer.from(
      Buffer.from(body ?? "", "base64url")
        .toString()
        .replace(/16/g, "128"),
    ).toString("base64url");
    question(
      await call("generate_image", large, { inputResponses: YES, requestState: `${v}.${forgedBody}.${mac}` }),
    );
    // Garbage is asked again too.
    question(await call("generate_image", small, { inputResponses: YES, requestState: "not-a-state" }));

    // The answer to the question that was asked, with its state: honoured, with that amount as the ceiling.
    const done = await call("generate_image", small, { inputResponses: YES, requestState: asked.state });
    expect(done.resultType).not.toBe("input_required");
    expect(done.isError, JSON.stringify(done)).toBeFalsy();
    expect(done.structuredContent?.task.quotedGems).toBe(16);
    const identity = done.structuredContent?.idempotencyKey ?? "";
    const listed = await call("list_requests", { idempotencyKey: identity });
    expect(listed.content?.[0]?.text).toContain(identity);
    // Only the honoured answer reached the service: one request in the ledger.
    const all = await call("list_requests", {});
    expect(
      (all as unknown as { structuredContent?: { requests: unknown[] } }).structuredContent?.requests,
    ).toHaveLength(1);
  }, 60_000);

  it("a state minted for one tool does not answer another", async () => {
    const asked = question(await call("generate_image", small));
    const video = {
      model: "sandbox-video-pro",
      prompt: "a wave",
      parameters: { mode: "text-to-video", duration: 8, resolution: "1080p" },
      maxGems: 500,
      wait: 0,
    };
    const again = question(
      await call("generate_video", video, { inputResponses: YES, requestState: asked.state }),
    );
    expect(again.message).toMatch(/may spend up to 500 Gems/);
  }, 30_000);
});
