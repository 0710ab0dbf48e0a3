/**
 * The stack a host talks to, as users run it: the sandbox service on real loopback HTTP and the
 * built `dist/cli.js` on stdio pointed at it (GENERATION_BASE_URL), reached by a real MCP client.
 */
import type { Client } from "@modelcontextprotocol/client";
import { createSandbox, SANDBOX_API_KEY, type Sandbox } from "../../src/sandbox/sandbox.js";
import { CLI, connectCli, isolatedEnv } from "../helpers/cli.js";

export interface Stack {
  sandbox: Sandbox;
  /** The sandbox's base URL (its origin is where signed output URLs point). */
  baseUrl: string;
  client: Client;
  /** The server's stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

export async function startStack(
  o: { timeScale?: number; nodeArgs?: string[]; env?: Record<string, string>; apps?: boolean } = {},
): Promise<Stack> {
  const sandbox = createSandbox({ timeScale: o.timeScale ?? 1 });
  const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  const iso = isolatedEnv({
    GENERATION_BASE_URL: listening.url,
    GENERATION_API_KEY: SANDBOX_API_KEY,
    ...o.env,
  });
  const { client, stderr } = await connectCli({
    args: [...(o.nodeArgs ?? []), CLI],
    env: iso.env,
    name: "viewer-test-host",
    // A host that renders the view declares MCP Apps; tests of a plain client say apps: false.
    apps: o.apps ?? true,
  });
  return {
    sandbox,
    baseUrl: listening.url,
    client,
    stderr,
    async close() {
      await client.close().catch(() => {});
      await sandbox.close();
      iso.cleanup();
    },
  };
}
