/**
 * The viewer as a host meets it, without a browser: the resource (MIME, size, self-contained, CSP),
 * the links from the tools, the app-only tools hidden from the model, their bytes, and that a
 * client's tools/list loads none of the viewer.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import {
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
  RESOURCE_MIME_TYPE,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listing } from "../../src/mcp/define-tool.js";
import { VIEWER_TOOLS } from "../../src/surface/viewer-catalog.js";
import { VIEWER_TOOL } from "../../src/surface/viewer-tools.js";
import { isolatedEnv } from "../helpers/cli.js";
import { type Stack, startStack } from "./stack.js";

const VIEWER = "ui://generation/viewer";
const LINKED = ["generate_image", "generate_video", "generate_audio", "poll_task", "upload_asset"];
const APP_ONLY = ["viewer_read_task", "viewer_read_output"];

type Content = {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  _meta?: Record<string, unknown>;
};
const cspOf = (c: { _meta?: Record<string, unknown> }) =>
  (c._meta?.ui as { csp?: { resourceDomains?: string[]; connectDomains?: string[] } } | undefined)?.csp;

async function generate(client: Client, name: string, args: Record<string, unknown>) {
  const r = await client.callTool({ name, arguments: { wait: 30, ...args } });
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  return r.structuredContent as { idempotencyKey: string; task: { id: string; status: string } };
}

describe("the media viewer, as hosts see it", () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({ timeScale: 10 });
  });
  afterAll(() => s.close());

  it("is one resource of MIME text/html;profile=mcp-app, self-contained and under 150 KB", async () => {
    const listed = await s.client.listResources();
    const entry = listed.resources.find((r) => r.uri === VIEWER);
    expect(entry?.mimeType).toBe(RESOURCE_MIME_TYPE);
    const read = await s.client.readResource({ uri: VIEWER });
    expect(read.contents).toHaveLength(1);
    const c = read.contents[0] as Content;
    expect(c.mimeType).toBe("text/html;profile=mcp-app");
    const html = c.text ?? "";
    expect(html).toMatch(/^<!doctype html>/i);
    expect(Buffer.byteLength(html)).toBeLessThan(150 * 1024);
    // Nothing fetched at run time: no external scripts, styles, fonts or imports.
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href=/i);
    expect(html).not.toMatch(/@import|url\(\s*["']?https?:/i);
    expect(html).not.toMatch(/lgk_[0-9a-f]{64}/);
  });

  it("declares the service's origin for media and no network access (CSP)", async () => {
    const origin = new URL(s.baseUrl).origin;
    const c = (await s.client.readResource({ uri: VIEWER })).contents[0] as Content;
    expect(cspOf(c)).toEqual({ resourceDomains: [origin] });
    const entry = (await s.client.listResources()).resources.find((r) => r.uri === VIEWER) as
      | Content
      | undefined;
    expect(cspOf(entry ?? { uri: "" })?.resourceDomains).toEqual([origin]);
  });

  it("is linked from the media tools, and its app-only tools are absent from what the model sees", async () => {
    const { tools } = await s.client.listTools();
    for (const name of LINKED) {
      const tool = tools.find((t) => t.name === name);
      expect(getToolUiResourceUri(tool ?? {}), name).toBe(VIEWER);
      // Both keys, as ext-apps' registerAppTool emits them: claude.ai mounts a view only from the flat one.
      expect(tool?._meta?.["ui/resourceUri"], name).toBe(VIEWER);
    }
    for (const name of APP_ONLY) {
      const tool = tools.find((t) => t.name === name);
      expect(tool && isToolVisibilityAppOnly(tool), name).toBe(true);
    }
    const modelSees = tools.filter((t) => !isToolVisibilityAppOnly(t)).map((t) => t.name);
    for (const name of APP_ONLY) expect(modelSees).not.toContain(name);
    expect(modelSees).toEqual(expect.arrayContaining([...LINKED, "save_outputs", "list_models"]));
  });

  it("lists its app-only tools from a listing equal to their definitions", () => {
    expect(VIEWER_TOOLS).toEqual(Object.values(VIEWER_TOOL).map(listing));
  });

  it("reads a running task, then an output's bytes equal to the output resource", async () => {
    const gen = await generate(s.client, "generate_audio", {
      model: "service-voice",
      operation: "speech",
      prompt: "Hello from the viewer test.",
      parameters: { voiceProfileId: "voice_en_01" },
    });
    const r = await s.client.callTool({ name: "viewer_read_task", arguments: { taskId: gen.task.id } });
    const read = r.structuredContent as { task: { id: string; status: string }; terminal: boolean };
    expect(read.task.id).toBe(gen.task.id);
    expect(read.terminal).toBe(true);
    const whole = (await s.client.readResource({ uri: `generation://tasks/${gen.task.id}/outputs/0` }))
      .contents[0] as Content;
    const parts: Buffer[] = [];
    let offset = 0;
    for (;;) {
      const c = await s.client.callTool({
        name: "viewer_read_output",
        arguments: { taskId: gen.task.id, index: 0, offset },
      });
      const chunk = c.structuredContent as {
        data: string;
        total: number;
        done: boolean;
        offset: number;
        mimeType: string;
      };
      expect(chunk.offset).toBe(offset);
      expect(chunk.mimeType).toBe(whole.mimeType);
      parts.push(Buffer.from(chunk.data, "base64"));
      offset += parts.at(-1)?.byteLength ?? 0;
      if (chunk.done) {
        expect(offset).toBe(chunk.total);
        break;
      }
    }
    expect(Buffer.concat(parts).equals(Buffer.from(whole.blob ?? "", "base64"))).toBe(true);
    const missing = await s.client.callTool({
      name: "viewer_read_output",
      arguments: { taskId: gen.task.id, index: 5, offset: 0 },
    });
    expect(missing.isError).toBe(true);
    expect(JSON.stringify(missing.content)).toMatch(/NOT_FOUND.*#5/);
  });
});

describe("the viewer costs nothing until a host reads it", () => {
  it("loads no viewer code for tools/list or resources/list, only for the resource read", async () => {
    const trace = join(isolatedEnv().dir, "imports.txt");
    const hook = join(import.meta.dirname, "fixtures", "trace-imports.mjs");
    const s = await startStack({ nodeArgs: ["--import", hook], env: { TRACE_IMPORTS_FILE: trace } });
    try {
      const loaded = () => readFileSync(trace, "utf8").split("\n");
      await s.client.listTools();
      await s.client.listResources();
      expect(loaded().some((u) => u.endsWith("/dist/bundle/cli.js"))).toBe(true);
      const viewerChunk = (u: string) => /\/dist\/bundle\/(html|viewer-tools)-[^/]*\.js$/.test(u);
      expect(loaded().filter(viewerChunk)).toEqual([]);
      await s.client.readResource({ uri: VIEWER });
      expect(loaded().filter(viewerChunk)).toHaveLength(1);
    } finally {
      await s.close();
    }
  });
});

describe("GENERATION_MEDIA_ORIGINS", () => {
  it("adds a CDN's origin to the view's CSP, and refuses anything but origins", async () => {
    const { parseCommand, ConfigError } = await import("../../src/config/index.js");
    const cmd = parseCommand(["--sandbox"], {
      GENERATION_MEDIA_ORIGINS: "https://cdn.example.com, http://127.0.0.1:9000",
    });
    expect(cmd.name === "serve" && cmd.config.mediaOrigins).toEqual([
      "https://cdn.example.com",
      "http://127.0.0.1:9000",
    ]);
    expect(() =>
      parseCommand(["--sandbox"], { GENERATION_MEDIA_ORIGINS: "https://cdn.example.com/media" }),
    ).toThrow(ConfigError);
    expect(() => parseCommand(["--sandbox"], { GENERATION_MEDIA_ORIGINS: "ftp://cdn.example.com" })).toThrow(
      /GENERATION_MEDIA_ORIGINS: entry 1 of 1: expected an http\(s\) origin/,
    );
    const { harness } = await import("../tools/harness.js");
    const h = await harness({ config: { mediaOrigins: ["https://cdn.example.com"] } });
    try {
      const c = (await h.mcp.readResource({ uri: VIEWER })).contents[0] as Content;
      // The harness's sandbox sits at a placeholder origin, which grants nothing.
      expect(cspOf(c)).toEqual({ resourceDomains: ["https://cdn.example.com"] });
      expect(c.text).toContain("<!doctype html>");
    } finally {
      await h.close();
    }
  });
});

describe("the viewer where claude.ai looks for it (_meta.ui.domain)", () => {
  it("names to Claude's hosts the sandbox origin Claude derives from the server's URL; to others, or without a public URL, none", async () => {
    const { claudeDomain } = await import("../../src/surface/viewer.js");
    // The example of Claude's connector docs: sha256("https://example.com/mcp"), its first 32 hex digits.
    expect(claudeDomain("https://example.com")).toMatch(
      /^c3d80a4ed901ee05b21755a[0-9a-f]{9}\.claudemcpcontent\.com$/,
    );
    expect(claudeDomain("https://example.com/mcp")).toBe(claudeDomain("https://example.com"));
    expect(claudeDomain(undefined)).toBeUndefined();
    const { harness } = await import("../tools/harness.js");
    const h = await harness({ config: { publicUrl: "https://example.com" }, clientName: "claude-ai" });
    try {
      const c = (await h.mcp.readResource({ uri: VIEWER })).contents[0] as Content;
      expect((c._meta?.ui as { domain?: string } | undefined)?.domain).toBe(
        claudeDomain("https://example.com"),
      );
    } finally {
      await h.close();
    }
    // Another host that honours ui.domain (the MCP Inspector) would serve the view from Claude's origin.
    const inspector = await harness({
      config: { publicUrl: "https://example.com" },
      clientName: "inspector-client",
    });
    try {
      const c = (await inspector.mcp.readResource({ uri: VIEWER })).contents[0] as Content;
      expect(c._meta?.ui).not.toHaveProperty("domain");
    } finally {
      await inspector.close();
    }
    const bare = await harness();
    try {
      const c = (await bare.mcp.readResource({ uri: VIEWER })).contents[0] as Content;
      expect(c._meta?.ui).not.toHaveProperty("domain");
    } finally {
      await bare.close();
    }
  });
});
