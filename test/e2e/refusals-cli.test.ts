/**
 * The bundled CLI (dist/cli.js) on stdio against `generation-mcp sandbox` over loopback, through a
 * recording front that counts what reached the service:
 * - every prompt, description and the server's instructions promise a free repeat only where it is
 *   one (outcome unknown, result not delivered); a delivered generate_image repeated is new work;
 * - blank prompts and what the model catalog rules out are refused locally: INVALID_ARGUMENT naming
 *   the field, nothing submitted, no ledger record; an unreadable catalog blocks nothing.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { CLI, type ConnectedCli, connectCli, isolatedEnv, startSandboxCli } from "../helpers/cli.js";
import { descriptionsIn, unqualifiedFreeRepeats } from "../helpers/money-claims.js";

type Result = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: unknown };
const textOf = (r: Result) => r.content.map((c) => c.text ?? "").join("\n");

const iso = isolatedEnv();
let sandbox: Awaited<ReturnType<typeof startSandboxCli>>;
let front: Server;
let frontUrl: string;
/** The public key `generation-mcp sandbox` announces. */
const apiKey = SANDBOX_API_KEY;
/** "METHOD /path" of every request that reached the service. */
const seen: string[] = [];
const submissions = () => seen.filter((r) => r.startsWith("POST /api/generate/"));

/** The sandbox prints its key; the front forwards everything to it and records the route. */
beforeAll(async () => {
  sandbox = await startSandboxCli(iso.env);
  front = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      seen.push(`${req.method} ${req.url}`);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      headers.delete("host");
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const answer = await fetch(`${sandbox.url}${req.url}`, {
        method: req.method ?? "GET",
        headers,
        ...(hasBody ? { body: Buffer.concat(chunks) } : {}),
      });
      const out = Buffer.from(await answer.arrayBuffer());
      const passed = Object.fromEntries(
        [...answer.headers].filter(
          ([k]) => !["content-encoding", "content-length", "transfer-encoding"].includes(k),
        ),
      );
      res.writeHead(answer.status, passed);
      res.end(out);
    });
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
}, 30_000);

afterAll(async () => {
  await new Promise((resolve) => front?.close(resolve));
  await sandbox?.stop();
  iso.cleanup();
});

const connect = (): Promise<ConnectedCli> =>
  connectCli({
    args: [CLI],
    env: { ...iso.env, GENERATION_BASE_URL: frontUrl, GENERATION_API_KEY: apiKey },
    name: "refusals-test",
  });

async function call(c: ConnectedCli, name: string, args: Record<string, unknown>): Promise<Result> {
  return (await c.client.callTool({ name, arguments: args })) as Result;
}

describe("what the server says about repeating a paid call (built CLI)", () => {
  it("no prompt, description or instruction promises a free repeat without saying when", async () => {
    const c = await connect();
    try {
      const texts: string[] = [c.client.getInstructions() ?? ""];
      const { tools } = await c.client.listTools();
      for (const t of tools) {
        texts.push(`${t.name}: ${t.description ?? ""}`, ...descriptionsIn(t.inputSchema, t.name));
        texts.push(...descriptionsIn(t.outputSchema ?? {}, t.name));
      }
      const { prompts } = await c.client.listPrompts();
      expect(prompts.map((p) => p.name).sort()).toEqual(["recover_lost_work", "storyboard", "voice_over"]);
      for (const p of prompts)
        texts.push(p.description ?? "", ...(p.arguments ?? []).map((a) => a.description ?? ""));
      const gets: { name: string; arguments: Record<string, string> }[] = [
        { name: "storyboard", arguments: { scene: "A kite over a beach." } },
        { name: "storyboard", arguments: { scene: "A kite.", shots: "2", imageModel: "sandbox-image-fast" } },
        { name: "voice_over", arguments: { script: "Hello there." } },
        { name: "voice_over", arguments: { script: "Long. ".repeat(800), voiceId: "v1" } },
        { name: "recover_lost_work", arguments: {} },
        { name: "recover_lost_work", arguments: { taskId: "task_1" } },
      ];
      for (const g of gets) {
        const got = await c.client.getPrompt(g);
        for (const m of got.messages) if (m.content.type === "text") texts.push(m.content.text);
      }
      const { resourceTemplates } = await c.client.listResourceTemplates();
      for (const r of resourceTemplates) texts.push(r.description ?? "");
      const flagged = texts.flatMap(unqualifiedFreeRepeats);
      expect(flagged).toEqual([]);
      expect(texts.join("\n")).toMatch(/new work and (spends|is charged) again/);
    } finally {
      await c.client.close();
    }
  }, 60_000);

  it("a generate_image repeated after its result arrived is new work: a second task and identity", async () => {
    const c = await connect();
    try {
      seen.length = 0;
      const args = { model: "sandbox-image-fast", prompt: "a kite, delivered", wait: 0 };
      const first = await call(c, "generate_image", args);
      // Delivery is marked once stdout took the answer; until then a repeat would rightly replay.
      const until = Date.now() + 10_000;
      while (/result not delivered/.test(textOf(await call(c, "list_requests", {})))) {
        if (Date.now() > until) throw new Error("the first result was never marked delivered");
        await new Promise((r) => setTimeout(r, 50));
      }
      const second = await call(c, "generate_image", args);
      for (const r of [first, second]) {
        expect(r.isError, textOf(r)).toBeFalsy();
        expect(unqualifiedFreeRepeats(textOf(r))).toEqual([]);
      }
      const a = first.structuredContent as { idempotencyKey: string; created: boolean; task: { id: string } };
      const b = second.structuredContent as typeof a;
      expect(b.created).toBe(true);
      expect(b.idempotencyKey).not.toBe(a.idempotencyKey);
      expect(b.task.id).not.toBe(a.task.id);
      expect(submissions()).toEqual(["POST /api/generate/image", "POST /api/generate/image"]);
    } finally {
      await c.client.close();
    }
  }, 60_000);
});

describe("refused before anything is sent (built CLI)", () => {
  /** Refused locally, naming what `says`; nothing submitted, and the ledger holds no record of it. */
  async function refused(c: ConnectedCli, tool: string, args: Record<string, unknown>, ...says: RegExp[]) {
    const before = (await ledgerKeys(c)).length;
    seen.length = 0;
    const r = await call(c, tool, args);
    expect(r.isError, textOf(r)).toBe(true);
    expect(textOf(r)).toMatch(/^INVALID_ARGUMENT: /);
    for (const s of says) expect(textOf(r)).toMatch(s);
    expect(submissions(), textOf(r)).toEqual([]);
    expect(await ledgerKeys(c)).toHaveLength(before);
  }
  async function ledgerKeys(c: ConnectedCli): Promise<string[]> {
    const r = await call(c, "list_requests", {});
    return (r.structuredContent as { requests: { idempotencyKey: string }[] }).requests.map(
      (x) => x.idempotencyKey,
    );
  }

  it("a blank prompt, for every paid tool with one", async () => {
    const c = await connect();
    try {
      for (const prompt of ["", "   "]) {
        await refused(
          c,
          "generate_image",
          { model: "sandbox-image-fast", prompt, wait: 0 },
          /^INVALID_ARGUMENT: prompt: /,
        );
        const t2v = { mode: "text-to-video" };
        await refused(
          c,
          "generate_video",
          { model: "sandbox-video-lite", prompt, parameters: t2v },
          /prompt: /,
        );
        const speech = { model: "service-voice", operation: "speech", parameters: { voiceProfileId: "v" } };
        await refused(c, "generate_audio", { ...speech, prompt }, /prompt: /);
        await refused(
          c,
          "generate_audio",
          { model: "sandbox-music", operation: "music", prompt },
          /prompt: /,
        );
        await refused(c, "extract_video", { videoAssetId: "a1", prompt }, /prompt: /);
      }
    } finally {
      await c.client.close();
    }
  }, 60_000);

  it("what the model catalog rules out, naming the field, the value and what is allowed", async () => {
    const c = await connect();
    try {
      const image = (model: string, parameters: Record<string, unknown> = {}) => ({
        model,
        prompt: "a fox",
        parameters,
        wait: 0,
      });
      await refused(
        c,
        "generate_image",
        image("sandbox-video-lite"),
        /model: sandbox-video-lite is a video model/,
      );
      await refused(
        c,
        "generate_image",
        image("no-such-model"),
        /model: "no-such-model" is not in the model catalog/,
      );
      await refused(c, "generate_image", image("sandbox-image-legacy"), /not available/);
      await refused(
        c,
        "generate_image",
        image("sandbox-image-fast", { ratio: "21:9" }),
        /parameters\.ratio: "21:9" .*1:1/,
      );
      await refused(
        c,
        "generate_image",
        image("sandbox-image-fast", { resolution: "4K" }),
        /resolutions: 1K/,
      );
      await refused(
        c,
        "generate_image",
        image("sandbox-image-pro", { outputCount: 4, ratio: "5:4" }),
        /"5:4"/,
      );
      await refused(
        c,
        "generate_image",
        image("sandbox-image-edit", { outputCount: 3, sourceImage: "a1" }),
        /parameters\.outputCount: 3 .*maxOutputs: 2/,
      );
      const clip = (parameters: Record<string, unknown>) => ({
        model: "sandbox-video-lite",
        prompt: "waves",
        parameters,
        wait: 0,
      });
      await refused(c, "generate_video", clip({ duration: 5 }), /parameters\.mode: is required/);
      await refused(c, "generate_video", clip({ mode: "text-to-video", duration: 7 }), /durations: 5, 10/);
      await refused(c, "generate_video", clip({ mode: "text-to-video", ratio: "4:3" }), /aspectRatios/);
      await refused(c, "generate_video", clip({ mode: "text-to-video", resolution: "4K" }), /720p/);
      await refused(
        c,
        "generate_audio",
        { model: "service-voice", operation: "music", prompt: "a song", wait: 0 },
        /operation: music is not offered by model service-voice/,
      );
      await refused(
        c,
        "generate_audio",
        {
          model: "sandbox-music",
          operation: "speech",
          prompt: "Hi",
          parameters: { voiceProfileId: "v" },
          wait: 0,
        },
        /operation: speech .*use service-voice/,
      );
    } finally {
      await c.client.close();
    }
  }, 90_000);

  it("a catalog that cannot be read blocks nothing: the service judges, and says so", async () => {
    const inject = await fetch(`${sandbox.url}/sandbox/faults`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ route: "GET /api/generate/models", fault: { status: 503 }, times: 50 }),
    });
    expect(inject.status).toBe(201);
    const c = await connect();
    try {
      seen.length = 0;
      const r = await call(c, "generate_image", { model: "sandbox-video-lite", prompt: "a fox", wait: 0 });
      expect(textOf(r)).toMatch(/^MODEL_UNAVAILABLE: /);
      expect(submissions()).toEqual(["POST /api/generate/image"]);
    } finally {
      await c.client.close();
      await fetch(`${sandbox.url}/sandbox/faults`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${apiKey}` },
      });
    }
  }, 60_000);
});
