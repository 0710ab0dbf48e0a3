/**
 * What tools/list costs each kind of client, through the built CLI over stdio and HTTP: the viewer's
 * app-only tools go only to a client that declares MCP Apps (the `io.modelcontextprotocol/ui`
 * extension), and the answer stays at or under 20,000 bytes of JSON for either kind.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { isToolVisibilityAppOnly } from "@modelcontextprotocol/ext-apps/app-bridge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  APP_MIME_TYPE,
  APPS_EXTENSION,
  CLI,
  connectCli,
  isolatedEnv,
  type Started,
  startHttpCli,
} from "../helpers/cli.js";

const APP_ONLY = ["viewer_read_task", "viewer_read_output", "viewer_upload"];
const MAX_BYTES = 20_000;
const appsCapabilities = {
  capabilities: { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } },
};

type Tools = Awaited<ReturnType<Client["listTools"]>>["tools"];

function checkListing(tools: Tools, apps: boolean): void {
  const bytes = Buffer.byteLength(JSON.stringify({ tools }));
  expect(bytes, `tools/list for a client ${apps ? "with" : "without"} Apps`).toBeLessThanOrEqual(MAX_BYTES);
  const names = tools.map((t) => t.name);
  for (const name of APP_ONLY) expect(names.includes(name), name).toBe(apps);
  for (const t of tools.filter((t) => APP_ONLY.includes(t.name))) {
    expect(isToolVisibilityAppOnly(t), t.name).toBe(true);
    // A resourceUri would make hosts (the MCP Inspector's Apps tab) offer the tool as an app to open.
    expect(JSON.stringify(t._meta ?? {}), t.name).not.toContain("resourceUri");
  }
  expect(names).toContain("generate_image");
}

describe("tools/list by client kind, over stdio", () => {
  for (const apps of [false, true]) {
    it(`a client ${apps ? "declaring" : "without"} MCP Apps`, async () => {
      const iso = isolatedEnv();
      const again = await connectCli({ args: [CLI, "--sandbox"], env: iso.env, apps });
      try {
        checkListing((await again.client.listTools()).tools, apps);
        // Unlisted is not refused: a host that renders the view without declaring it still reads.
        const r = await again.client.callTool({
          name: "viewer_read_task",
          arguments: { taskId: "task_none" },
        });
        expect(JSON.stringify(r.content)).not.toMatch(/Tool viewer_read_task (not found|disabled)/);
        expect(JSON.stringify(r.content)).toMatch(/task_none/);
      } finally {
        await again.client.close();
        iso.cleanup();
      }
    });
  }
});

describe("tools/list by client kind, over HTTP", () => {
  let server: Started;
  let iso: ReturnType<typeof isolatedEnv>;
  beforeAll(async () => {
    iso = isolatedEnv();
    server = await startHttpCli(["--sandbox"], iso.env);
  });
  afterAll(async () => {
    await server?.stop();
    iso?.cleanup();
  });

  it("says at start that a session without a key runs under the sandbox's (these clients send none)", () => {
    expect(server.stdout()).toMatch(/^ {2}auth: key \(.*; without one, the sandbox's own key\)$/m);
  });

  for (const apps of [false, true]) {
    it(`a client ${apps ? "declaring" : "without"} MCP Apps`, async () => {
      const client = new Client({ name: "listing", version: "1" }, apps ? appsCapabilities : {});
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      try {
        checkListing((await client.listTools()).tools, apps);
      } finally {
        await client.close();
      }
    });
  }
});

describe("the viewer's CSP with --sandbox, over stdio", () => {
  it("names the origin the sandbox's signed URLs really use, listed before any call and read after", async () => {
    const iso = isolatedEnv();
    const { client } = await connectCli({ args: [CLI, "--sandbox"], env: iso.env, apps: true });
    type WithCsp = { uri: string; _meta?: { ui?: { csp?: { resourceDomains?: string[] } } } };
    const domains = (c: WithCsp | undefined) => c?._meta?.ui?.csp?.resourceDomains ?? [];
    try {
      // The MCP Inspector allows the view no image source but these (not blob:, not data:): an
      // empty list there means no image at all.
      const listed = (await client.listResources()).resources as WithCsp[];
      const before = domains(listed.find((r) => r.uri === "ui://generation/viewer"));
      expect(before).toHaveLength(1);
      expect(before[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const r = await client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt: "a kite", wait: 30 },
      });
      const task = (r.structuredContent as { task: { outputs: Array<{ asset: { url: string } | null }> } })
        .task;
      const url = task.outputs[0]?.asset?.url ?? "";
      expect(new URL(url).origin).toBe(before[0]);
      const read = await client.readResource({ uri: "ui://generation/viewer" });
      expect(domains(read.contents[0] as WithCsp)).toEqual(before);
      expect((await fetch(url)).status).toBe(200);
    } finally {
      await client.close();
      iso.cleanup();
    }
  });
});
