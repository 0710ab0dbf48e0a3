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

const APP_ONLY = ["viewer_read_task", "viewer_read_output"];
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
