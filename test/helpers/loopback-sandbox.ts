/**
 * An in-process sandbox listening on loopback, with a key of its own, for tests that run the built
 * CLI against it and read what reached it (`stats`) or steer it (`faults`) directly.
 */
import { createSandbox, type Sandbox, type SandboxOptions } from "../../src/sandbox/sandbox.js";
import { isolatedEnv } from "./cli.js";

export interface LoopbackSandbox {
  sandbox: Sandbox;
  url: string;
  key: string;
  /** The built CLI's environment against it, with a ledger file of its own per `name`. */
  envOf(name: string, extra?: Record<string, string>): Record<string, string>;
  /** Stops the listener and the sandbox, and removes the private directory. */
  stop(): Promise<void>;
}

export async function loopbackSandbox(o: SandboxOptions = {}): Promise<LoopbackSandbox> {
  const iso = isolatedEnv();
  const sandbox = createSandbox(o);
  const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
  const key = sandbox.addKey({ scopes: ["read", "generate"] });
  return {
    sandbox,
    url: listening.url,
    key,
    envOf: (name, extra = {}) => ({
      ...iso.env,
      GENERATION_STORE: `sqlite://${iso.dir}/${name}.sqlite`,
      GENERATION_BASE_URL: listening.url,
      GENERATION_API_KEY: key,
      ...extra,
    }),
    async stop() {
      await listening.close();
      await sandbox.close();
      iso.cleanup();
    },
  };
}
