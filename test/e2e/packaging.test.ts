/**
 * What hosts install from: the MCPB manifest (validated by mcpb itself, and its server started the
 * way Claude Desktop starts it), the MCP registry's server.json (validated against the registry's
 * published schema). The binary's answer on a Node older than the floor is checked by CI's packed
 * install (scripts/packaged.ts), which has such a Node at hand.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { getMcpConfigForManifest, v0_3 } from "@anthropic-ai/mcpb";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, SANDBOX_API_KEY, type Sandbox } from "../../src/sandbox/sandbox.js";
import { VIEWER_TOOLS } from "../../src/surface/viewer-catalog.js";
import { CATALOG } from "../../src/tools/catalog.js";
import { connectCli, isolatedEnv, ROOT } from "../helpers/cli.js";

const json = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(ROOT, file), "utf8")) as Record<string, unknown>;
const pkg = json("package.json") as { name: string; version: string; mcpName: string };
const iso = isolatedEnv();
afterAll(() => iso.cleanup());

const textOf = (r: { content?: unknown }): string =>
  ((r.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");

describe("server.json for the MCP registry", () => {
  // server.json names the current schema, 2025-12-11. test/fixtures/server.schema.json is the
  // registry's published 2025-09-29 schema, vendored unchanged: the 2025-12-11 file itself could not
  // be obtained here. Per the registry's changelog
  // (https://github.com/modelcontextprotocol/registry/blob/main/docs/reference/server-json/CHANGELOG.md)
  // every change since only relaxes it (package `version` optional
  // for OCI and MCPB, URL template variables for remotes), so an npm/stdio entry valid against the
  // fixture is valid against 2025-12-11. Replace the fixture with the 2025-12-11 file when it can be
  // fetched, and the $id check below tightens to equality again.
  const CURRENT_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
  const schema = json("test/fixtures/server.schema.json");
  const server = json("server.json") as {
    $schema: string;
    name: string;
    version: string;
    packages: Array<{
      registryType: string;
      identifier: string;
      version: string;
      transport: { type: string };
      environmentVariables: Array<{ name: string; isSecret?: boolean; isRequired?: boolean }>;
    }>;
  };

  it("validates against the registry's schema", () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const addFormats = addFormatsModule as unknown as (a: Ajv) => void;
    addFormats(ajv);
    const validate = ajv.compile(schema);
    expect(validate(server), JSON.stringify(validate.errors)).toBe(true);
    expect(server.$schema).toBe(CURRENT_SCHEMA);
    expect([
      CURRENT_SCHEMA,
      "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
    ]).toContain(schema.$id);
    // The validator is not vacuous: a broken document fails.
    expect(validate({ ...server, name: "no-slash", packages: [{ registryType: "npm" }] })).toBe(false);
  });

  it("names the repository, homepage and issue tracker, alike in package.json, server.json and manifest.json", () => {
    const repo = "https://github.com/generation-mcp/generation-mcp";
    const full = json("package.json") as {
      repository?: { type: string; url: string };
      homepage?: string;
      bugs?: { url: string };
    };
    expect(full.repository).toEqual({ type: "git", url: `git+${repo}.git` });
    expect(full.homepage).toBe(`${repo}#readme`);
    expect(full.bugs).toEqual({ url: `${repo}/issues` });
    const described = json("server.json") as { repository?: unknown; websiteUrl?: string };
    expect(described.repository).toEqual({ url: repo, source: "github" });
    expect(described.websiteUrl).toBe(full.homepage);
    const manifest = json("manifest.json") as {
      repository?: { url: string };
      homepage?: string;
      support?: string;
    };
    expect(manifest.repository?.url).toBe(repo);
    expect(manifest.homepage).toBe(full.homepage);
    expect(manifest.support).toBe(full.bugs?.url);
  });

  it("describes this npm package on stdio, with the key marked secret", () => {
    expect(server.name).toBe(pkg.mcpName);
    expect(server.version).toBe(pkg.version);
    const [npm] = server.packages;
    expect(npm).toMatchObject({
      registryType: "npm",
      identifier: pkg.name,
      version: pkg.version,
      transport: { type: "stdio" },
    });
    const vars = new Map(npm?.environmentVariables.map((v) => [v.name, v]));
    expect(vars.get("GENERATION_API_KEY")).toMatchObject({ isSecret: true, isRequired: true });
    expect(vars.get("GENERATION_BASE_URL")).toMatchObject({ isRequired: true });
    for (const [name, v] of vars) if (name !== "GENERATION_API_KEY") expect(v.isSecret, name).toBeFalsy();
  });
});

describe("the MCPB bundle's manifest", () => {
  const manifest = json("manifest.json");
  let sandbox: Sandbox;
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    sandbox = createSandbox({ seed: "mcpb" });
    ({ url, close } = await sandbox.listen({ host: "127.0.0.1", port: 0 }));
  });
  afterAll(async () => {
    await close();
    await sandbox.close();
  });

  it("is valid for mcpb, matches the package and lists the server's tools", () => {
    const parsed = v0_3.McpbManifestSchema.safeParse(manifest);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(manifest.version).toBe(pkg.version);
    const tools = (manifest.tools as Array<{ name: string }>).map((t) => t.name);
    expect(tools).toEqual(CATALOG.map((t) => t.name));
    const config = manifest.user_config as Record<string, { type: string; sensitive?: boolean }>;
    expect(config.api_key).toMatchObject({ type: "string", sensitive: true });
    expect(config.allowed_directory).toMatchObject({ type: "directory" });
    expect(config.wait_seconds).toMatchObject({ type: "number" });
    expect(config.confirm_above_gems).toMatchObject({ type: "number" });
  });

  it("starts as Claude Desktop starts it, optional settings left empty, and makes a paid call", async () => {
    const mcp = await getMcpConfigForManifest({
      manifest: manifest as never,
      extensionPath: ROOT,
      systemDirs: { HOME: iso.dir },
      userConfig: { base_url: url, api_key: SANDBOX_API_KEY },
      pathSeparator: "/",
    });
    expect(mcp).toBeDefined();
    // The host runs `node` with the manifest's env; this test's Node stands in for the host's.
    const { client, stderr } = await connectCli({
      command: mcp?.command === "node" ? process.execPath : String(mcp?.command),
      args: mcp?.args ?? [],
      env: { ...iso.env, ...mcp?.env },
      name: "mcpb-host",
      // Claude Desktop renders MCP Apps and declares it, so it is listed the viewer's app-only tools.
      apps: true,
    });
    try {
      const { tools } = await client.listTools();
      // Every tool of the catalog, then the media viewer's app-only ones (hosts hide those from the model).
      expect(tools.map((t) => t.name)).toEqual([...CATALOG, ...VIEWER_TOOLS].map((t) => t.name));
      const r = await client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt: "a lighthouse at dusk", wait: 20 },
      });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ task: { id: expect.any(String) } });
      expect(stderr()).not.toContain(SANDBOX_API_KEY);
    } finally {
      await client.close();
    }
  });
});
