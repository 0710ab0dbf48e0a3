/**
 * The host snippets of docs/hosts.md (and the README's short form) and mcp.json.example as a new user takes them: every
 * host has a from-a-clone form (`node /absolute/path/…/dist/cli.js`) beside its npx form (which
 * works only once the package is published), and each from-a-clone entry, with the placeholder
 * path replaced by this clone and the service by the sandbox, starts the built CLI and answers.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { connectCli, isolatedEnv, ROOT, startSandboxCli } from "../helpers/cli.js";

const PLACEHOLDER = "/absolute/path/to/generation-mcp";
/** VS Code's variable for its workspace folder, as its snippets write it. */
const WORKSPACE = ["$", "{workspaceFolder}"].join("");
const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const readmeSection = readme.slice(
  readme.indexOf("## Connecting a host"),
  readme.indexOf("\n## ", readme.indexOf("## Connecting a host") + 3),
);
/** Every host, step by step (the README links there and keeps one snippet of its own). */
const section = readFileSync(join(ROOT, "docs", "hosts.md"), "utf8");

interface Entry {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  type?: string;
}
/** The stdio server entries of a host's JSON (`mcpServers` or VS Code's `servers`), by name. */
function entries(json: string): [string, Entry][] {
  const doc = JSON.parse(json) as { mcpServers?: Record<string, Entry>; servers?: Record<string, Entry> };
  return Object.entries(doc.mcpServers ?? doc.servers ?? {}).filter(([, e]) => e.command !== undefined);
}
const jsonBlocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
/** The section's prose with line breaks as spaces, for phrases that wrap. */
const prose = section.replace(/\s+/g, " ");
/** Each host's paragraph and snippets, from its bold name to the next. */
const hosts = section.split(/\n## /).slice(1);

const iso = isolatedEnv();
let sandbox: { url: string; stop(): Promise<void> };
beforeAll(async () => {
  sandbox = await startSandboxCli(iso.env);
});
afterAll(async () => {
  await sandbox?.stop();
  iso.cleanup();
});

/** Starts an entry as a host would, on this clone and the sandbox; lists tools and models. */
async function startsAndAnswers(entry: Entry): Promise<void> {
  const args = (entry.args ?? []).map((a) => a.replace(PLACEHOLDER, ROOT));
  // VS Code puts its workspace folder where a snippet says ${workspaceFolder}.
  const own = Object.entries(entry.env ?? {}).map(([k, v]) => [k, v.replace(WORKSPACE, iso.dir)]);
  const env = {
    ...iso.env,
    ...Object.fromEntries(own),
    GENERATION_BASE_URL: sandbox.url,
    GENERATION_API_KEY: SANDBOX_API_KEY,
    GENERATION_FILES: iso.dir,
  };
  // `node` is whichever Node runs the tests, as a host finds it on PATH.
  const command = entry.command === "node" ? process.execPath : String(entry.command);
  const { client } = await connectCli({ command, args, env, name: "snippet-host" });
  try {
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(10);
    const models = await client.callTool({ name: "list_models", arguments: {} });
    expect(models.isError).toBeFalsy();
  } finally {
    await client.close();
  }
}

describe("README: Connecting a host, short form", () => {
  it("runs from a clone today, and says the npx form waits for the package to be published", async () => {
    const prose = readmeSection.replace(/\s+/g, " ");
    expect(prose).toMatch(/works once the package is published/);
    const blocks = [...readmeSection.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
    const clone = blocks.flatMap(entries).filter(([, e]) => e.command === "node");
    expect(clone.length).toBe(1);
    for (const [, entry] of clone) await startsAndAnswers(entry);
  }, 30_000);
});

describe("docs/hosts.md: every host", () => {
  it("says the npx form works once the package is published, and how to run from a clone", () => {
    expect(prose).toMatch(/works once the package is published/);
    expect(prose).toMatch(/npm ci/);
    expect(prose).toContain(`node ${PLACEHOLDER}/dist/cli.js`);
  });

  it.each(["Claude Desktop", "Claude Code", "VS Code", "MCP Inspector"])(
    "%s has a from-a-clone form beside its npx form",
    (host) => {
      const text = (hosts.find((h) => h.startsWith(`${host}\n`)) ?? "").replace(/\s+/g, " ");
      expect(text, host).not.toBe("");
      expect(text).toMatch(/npx (-y )?(@modelcontextprotocol\/inspector )?(npx -y )?generation-mcp|"npx"/);
      expect(text).toMatch(/node (\/absolute\/path\/to\/generation-mcp\/)?dist\/cli\.js|"node"/);
    },
  );

  it("every JSON snippet's from-a-clone entry starts the built CLI and answers", async () => {
    const clone = jsonBlocks.flatMap(entries).filter(([, e]) => e.command === "node");
    const npx = jsonBlocks.flatMap(entries).filter(([, e]) => e.command === "npx");
    expect(clone.length).toBeGreaterThanOrEqual(2);
    expect(npx.length).toBe(clone.length);
    for (const [, entry] of clone) {
      expect(entry.args?.[0]).toBe(`${PLACEHOLDER}/dist/cli.js`);
      await startsAndAnswers(entry);
    }
  }, 60_000);

  it("Claude Code and VS Code, whose MCP root is the project, show where saves go inside it", () => {
    const claude = (hosts.find((h) => h.startsWith("Claude Code\n")) ?? "").replace(/\s+/g, " ");
    expect(claude).toContain("--env GENERATION_OUTPUT_DIR=/absolute/path/to/your/project/generated");
    expect(claude).toMatch(/saves go to `generated\/` in it/);
    const vscode = jsonBlocks.flatMap(entries).filter(([, e]) => e.type === "stdio");
    expect(vscode.length).toBe(2);
    for (const [, e] of vscode) expect(e.env?.GENERATION_OUTPUT_DIR).toBe(`${WORKSPACE}/generated`);
  });

  it("the Claude Code command's from-a-clone form starts the built CLI", async () => {
    const line = /-- (node \/absolute\/path\/to\/generation-mcp\/dist\/cli\.js)/.exec(prose)?.[1];
    expect(line).toBeDefined();
    const [command, ...args] = (line ?? "").split(" ");
    await startsAndAnswers({ command: command ?? "", args });
  }, 30_000);
});

describe("mcp.json.example", () => {
  const all = entries(readFileSync(join(ROOT, "mcp.json.example"), "utf8"));
  it("has a from-a-clone entry for every npx entry of this package, and each starts", async () => {
    const ours = all.filter(([, e]) => (e.args ?? []).some((a) => a === "generation-mcp"));
    const clone = all.filter(([, e]) => e.command === "node");
    expect(ours.length).toBeGreaterThan(0);
    expect(clone.length).toBe(ours.length);
    for (const [name] of ours) expect(name).toMatch(/once-published/);
    for (const [, entry] of clone) await startsAndAnswers(entry);
  }, 60_000);
});
