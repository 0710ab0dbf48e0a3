/**
 * An in-process MCP client linked to createMcpServer over an Engine whose service client
 * talks to an in-process sandbox, with a ledger on a temporary SQLite file. Every tool
 * result passes through `call`, which asserts the API key never appears in it and parses its
 * `structuredContent` with the tool's own output schema (see `checkOutput`).
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { type CallToolResult, createMcpHandler, InMemoryTransport } from "@modelcontextprotocol/server";
import { expect } from "vitest";
import { z } from "zod";
import { ServiceClient } from "../../src/client/service-client.js";
import { hashKey, type Ledger, openLedger } from "../../src/ledger/open-ledger.js";
import type { Engine, EngineConfig } from "../../src/mcp/context.js";
import type { ToolDefinition } from "../../src/mcp/define-tool.js";
import { UPLOAD_PROCESSING_MS } from "../../src/sandbox/assets.js";
import { createSandbox, SANDBOX_API_KEY, type Sandbox } from "../../src/sandbox/sandbox.js";
import { createMcpServer } from "../../src/surface/assemble.js";
import { loadTools } from "../../src/tools/all-tools.js";
import { CATALOG } from "../../src/tools/catalog.js";
import { drive } from "../helpers/fake-time.js";
import { tempDir } from "../helpers/temp.js";

export const BASE_URL = "http://sandbox.invalid";

type Elicited = { action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> };
/** Answers a question to the user, at once or later (or never: a host that does not draw the form). */
export type Elicit = (message: string) => Elicited | Promise<Elicited>;

export interface HarnessOptions {
  config?: Partial<EngineConfig>;
  /** Answers elicitations; when set the client declares the capability. */
  elicit?: Elicit;
  /** Root directories the client offers (given the temporary directory); when set the client declares roots. */
  roots?: (dir: string) => string[];
  timeScale?: number;
  apiKey?: string;
  /** Speak protocol revision 2026-07-28 (no sessions; questions as input_required rounds). */
  modern?: boolean;
  /** Declare that the client renders MCP Apps views (the media viewer). */
  apps?: boolean;
  /** The client's name in clientInfo (default tools-test); Claude's hosts say claude-ai. */
  clientName?: string;
}

export interface Harness {
  sandbox: Sandbox;
  engine: Engine;
  ledger: Ledger;
  mcp: Client;
  /** A temporary directory, the only allowed one unless config.files says otherwise. */
  dir: string;
  elicited: string[];
  /** Every JSON body the service received (POSTs), with its path, in order. */
  bodies: { path: string; body: Record<string, unknown> }[];
  call(
    name: string,
    args: Record<string, unknown>,
    o?: Parameters<Client["callTool"]>[1],
  ): Promise<CallToolResult>;
  /**
   * Uploads through `upload_asset` and returns once the asset is ready: the sandbox clock is moved
   * past its processing time, so no test depends on retries outlasting it under load.
   */
  uploadReady(args: Record<string, unknown>): Promise<{ id: string }>;
  close(): Promise<void>;
}

let definitions: Promise<Map<string, ToolDefinition>> | undefined;
/** Caches each schema's compiled validator. */
const ajv = new AjvJsonSchemaValidator();

/**
 * A successful result's `structuredContent` must parse with the tool's `outputSchema`, and validate
 * against the JSON Schema tools/list advertises for it (src/tools/catalog.ts: types and `required`
 * at every depth), as a host validates it. A plain `z.object` root also refuses undeclared keys
 * here (zod alone would drop them): the server sends none, though the advertised schema does not
 * say so (src/mcp/json-schema.ts); a loose root keeps its own rule. Errors carry no structured
 * content to check.
 */
export async function checkOutput(name: string, result: CallToolResult): Promise<void> {
  if (result.isError) return;
  definitions ??= loadTools().then((defs) => new Map(defs.map((d) => [d.name, d])));
  const def = (await definitions).get(name);
  if (!def) return; // an unknown tool's call is an error result, checked by its test
  expect(result.structuredContent, `${name} returned no structuredContent`).toBeDefined();
  const root = def.outputSchema;
  const schema = root.def.catchall === undefined ? z.strictObject(root.shape) : root;
  const parsed = schema.safeParse(result.structuredContent);
  expect(parsed.error?.issues ?? [], `${name}'s structuredContent against its outputSchema`).toEqual([]);
  const advertised = CATALOG.find((t) => t.name === name)?.outputSchema;
  expect(advertised, `${name} is listed with an output schema`).toBeDefined();
  const valid = ajv.getValidator(advertised ?? {})(result.structuredContent);
  expect(
    valid.errorMessage,
    `${name}'s structuredContent against its advertised outputSchema`,
  ).toBeUndefined();
}

export async function harness(o: HarnessOptions = {}): Promise<Harness> {
  const temp = tempDir("gen-mcp-tools-");
  const dir = temp.dir;
  await mkdir(path.join(dir, "files"));
  const sandbox = createSandbox({ timeScale: o.timeScale ?? 20, publicBaseUrl: BASE_URL });
  const apiKey = o.apiKey ?? SANDBOX_API_KEY;
  const bodies: Harness["bodies"] = [];
  const recording = (input: string | URL | Request, init?: RequestInit) => {
    if (typeof init?.body === "string" && init.method === "POST") {
      try {
        bodies.push({ path: new URL(String(input)).pathname, body: JSON.parse(init.body) });
      } catch {
        // Not JSON: not a submission.
      }
    }
    return sandbox.handler(input, init);
  };
  const client = new ServiceClient({ baseUrl: BASE_URL, apiKey, fetch: recording as typeof fetch });
  const ledger = await openLedger({
    storeUri: `sqlite://${path.join(dir, "ledger.sqlite")}`,
    // Replays come fast (5 ms base), but the cap leaves REFERENCES_PROCESSING replays (whose base
    // is long) up to 400 ms each: longer than an upload stays processing in the sandbox at the
    // default time scale (1 s / 20), so a reference uploaded just before is ready within them.
    backoff: { baseMs: 5, capMs: 400 },
  });
  const config: EngineConfig = {
    remoteUsers: false,
    files: [path.join(dir, "files")],
    outputDir: path.join(dir, "files", "generated"),
    extractionModel: "service-video-extract",
    defaultWaitSeconds: 20,
    ...o.config,
  };
  const engine: Engine = {
    config,
    client,
    ledger,
    keyHash: hashKey(apiKey),
    key: { origin: "environment", refused: false },
  };
  const server = createMcpServer(engine);
  const [a, b] = InMemoryTransport.createLinkedPair();
  // 2026-07-28 is served by the SDK's HTTP entry, one server per request; fetch calls it in-process.
  const http = o.modern ? createMcpHandler(() => createMcpServer(engine)) : undefined;
  if (!http) await server.connect(b);
  const capabilities: Record<string, unknown> = {};
  if (o.elicit) capabilities.elicitation = { form: {} };
  if (o.roots) capabilities.roots = {};
  if (o.apps)
    capabilities.extensions = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };
  const mcp = new Client(
    { name: o.clientName ?? "tools-test", version: "1.0.0" },
    { capabilities, ...(o.modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}) },
  );
  const elicited: string[] = [];
  if (o.elicit) {
    const answer = o.elicit;
    mcp.setRequestHandler("elicitation/create", async (req) => {
      const message = String((req.params as { message?: unknown }).message ?? "");
      elicited.push(message);
      return answer(message) as never;
    });
  }
  if (o.roots) {
    const roots = o.roots(dir);
    mcp.setRequestHandler("roots/list", async () => ({
      roots: roots.map((r) => ({ uri: pathToFileURL(r).href, name: path.basename(r) })),
    }));
  }
  await mcp.connect(
    http
      ? new StreamableHTTPClientTransport(new URL("http://127.0.0.1/mcp"), {
          fetch: ((url: string | URL, init?: RequestInit) =>
            http.fetch(new Request(url, init))) as typeof fetch,
        })
      : a,
  );
  // With tools/list cached, the SDK client also checks every structuredContent against the
  // advertised JSON Schema (what hosts check), besides checkOutput's zod parse.
  await mcp.listTools();
  return {
    sandbox,
    engine,
    ledger,
    mcp,
    dir,
    elicited,
    bodies,
    async call(name, args, opts) {
      const result = (await drive(mcp.callTool({ name, arguments: args }, opts))) as CallToolResult;
      expect(JSON.stringify(result)).not.toContain(apiKey);
      await checkOutput(name, result);
      return result;
    },
    async uploadReady(args) {
      const result = (await drive(mcp.callTool({ name: "upload_asset", arguments: args }))) as CallToolResult;
      expect(JSON.stringify(result)).not.toContain(apiKey);
      const { asset } = structured<{ asset: { id: string; state: string } }>(result);
      if (asset.state !== "ready") sandbox.advance(UPLOAD_PROCESSING_MS);
      return asset;
    },
    async close() {
      await mcp.close();
      await server.close();
      await http?.close();
      await ledger.close();
      await sandbox.close();
      temp.cleanup();
    },
  };
}

export const textOf = (r: CallToolResult): string =>
  r.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");

export const structured = <T = Record<string, unknown>>(r: CallToolResult): T => {
  expect(r.isError ?? false, textOf(r)).toBe(false);
  return r.structuredContent as T;
};
