/**
 * One version, package.json's, wherever the built server names it: `--version`, the serverInfo it
 * answers initialize with, and the appInfo its media viewer introduces itself with to the host.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, connectCli, isolatedEnv, ROOT, runCli } from "../helpers/cli.js";

const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

describe("the version the built server gives", () => {
  it("is package.json's in --version, serverInfo and the viewer's appInfo", async () => {
    const iso = isolatedEnv();
    const cli = await connectCli({ args: [CLI, "--sandbox"], env: iso.env, apps: true });
    try {
      expect((await runCli(["--version"], iso.env)).stdout.trim()).toBe(VERSION);
      expect(cli.client.getServerVersion()).toMatchObject({ name: "generation-mcp", version: VERSION });
      const page = (await cli.client.readResource({ uri: "ui://generation/viewer" })).contents[0] as {
        text: string;
      };
      // The page's call to the host's ui/initialize: host.connect({ name, version }) (src/viewer/app/main.ts).
      const appInfo = /name:\s*"generation-mcp viewer",\s*version:\s*"([^"]*)"/.exec(page.text);
      expect(appInfo?.[1]).toBe(VERSION);
    } finally {
      await cli.client.close();
      iso.cleanup();
    }
  });
});
