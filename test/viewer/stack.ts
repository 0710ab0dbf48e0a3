/**
 * The stack a host talks to, as users run it: the sandbox service on real loopback HTTP and the
 * built `dist/cli.js` on stdio pointed at it (GENERATION_BASE_URL), reached by a real MCP client.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createSandbox, SANDBOX_API_KEY, type Sandbox } from "../../src/sandbox/index.js";
import { CLI, isolatedEnv } from "../server/spawn.js";

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
  o: { timeScale?: number; nodeArgs?: string[]; env?: Record<string, string> } = {},
): Promise<Stack> {
  const sandbox = createSandbox({ timeScale: o.timeScale ?? 1 });
  const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  const iso = isolatedEnv({
    GENERATION_BASE_URL: listening.url,
    GENERATION_API_KEY: SANDBOX_API_KEY,
    ...o.env,
  });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...(o.nodeArgs ?? []), CLI],
    env: iso.env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const client = new Client({ name: "viewer-test-host", version: "1.0.0" });
  await client.connect(transport);
  return {
    sandbox,
    baseUrl: listening.url,
    client,
    stderr: () => stderr,
    async close() {
      await client.close().catch(() => {});
      await sandbox.close();
      iso.cleanup();
    },
  };
}
