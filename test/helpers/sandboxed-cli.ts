/** The built CLI on stdio, connected as a host, against its own `generation-mcp sandbox` over loopback. */
import { createSandbox, SANDBOX_API_KEY, type Sandbox } from "../../src/sandbox/sandbox.js";
import { CLI, type ConnectedCli, connectCli, isolatedEnv, startSandboxCli } from "./cli.js";

export interface SandboxedCli extends ConnectedCli {
  /** The sandbox's base URL (its /sandbox/faults steers it). */
  sandboxUrl: string;
  /** The private HOME, ledger and files directory (isolatedEnv). */
  dir: string;
  /** Closes the client, stops the sandbox and removes the directory. */
  close(): Promise<void>;
}

/**
 * Starts the sandbox in its own process, then the CLI with GENERATION_BASE_URL pointing at it and
 * the sandbox's key, in a private environment; whatever started is stopped if a later step fails.
 */
export async function connectSandboxedCli(name: string, apiKey = SANDBOX_API_KEY): Promise<SandboxedCli> {
  const iso = isolatedEnv();
  let sandbox: Awaited<ReturnType<typeof startSandboxCli>> | undefined;
  let cli: ConnectedCli | undefined;
  const close = async () => {
    await cli?.client.close();
    await sandbox?.stop();
    iso.cleanup();
  };
  try {
    sandbox = await startSandboxCli(iso.env);
    cli = await connectCli({
      args: [CLI],
      env: { ...iso.env, GENERATION_BASE_URL: sandbox.url, GENERATION_API_KEY: apiKey },
      name,
    });
  } catch (error) {
    await close();
    throw error;
  }
  return { ...cli, sandboxUrl: sandbox.url, dir: iso.dir, close };
}

export interface InProcessSandboxedCli extends ConnectedCli {
  /** The sandbox itself, in this process (its clock's speed, its stats). */
  sandbox: Sandbox;
  /** Closes the client, the sandbox's listener and the sandbox, and removes the directory. */
  close(): Promise<void>;
}

/**
 * The built CLI on stdio against a sandbox listening on loopback in this process, so a test can
 * set its clock's speed (`timeScale`: 4 runs it four times faster) and read its stats; `env` adds
 * settings to the private environment.
 */
export async function connectLoopbackSandbox(
  o: { timeScale?: number; env?: Record<string, string> } = {},
): Promise<InProcessSandboxedCli> {
  const iso = isolatedEnv();
  const sandbox = createSandbox(o.timeScale === undefined ? {} : { timeScale: o.timeScale });
  const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  const key = sandbox.addKey({ scopes: ["read", "generate"] });
  let cli: ConnectedCli | undefined;
  const close = async () => {
    await cli?.client.close();
    await listening.close();
    await sandbox.close();
    iso.cleanup();
  };
  try {
    cli = await connectCli({
      args: [CLI],
      env: { ...iso.env, GENERATION_BASE_URL: listening.url, GENERATION_API_KEY: key, ...o.env },
    });
  } catch (error) {
    await close();
    throw error;
  }
  return { ...cli, sandbox, close };
}
