/**
 * The embedded sandbox of --sandbox: started once, on demand, always listening on loopback, so
 * the signed output URLs it hands out are real ones people and other programs can open.
 */
import type { Sandbox } from "../sandbox/sandbox.js";

/** The sandbox's public SANDBOX_API_KEY, spelled out so stdio need not load the sandbox to know it (a test pins the two together). */
export const EMBEDDED_SANDBOX_KEY = `lgk_${"5a4d".repeat(16)}`;

export interface EmbeddedSandbox {
  /** Starts the sandbox (once) and resolves to its base URL. */
  start(): Promise<string>;
  close(): Promise<void>;
}

export function embeddedSandbox(): EmbeddedSandbox {
  let sandbox: Sandbox | undefined;
  let closeListener: (() => Promise<void>) | undefined;
  let started: Promise<string> | undefined;
  return {
    start() {
      started ??= (async () => {
        const { createSandbox } = await import("../sandbox/sandbox.js");
        sandbox = createSandbox({ timeScale: 1 });
        const listening = await sandbox.listen({ host: "127.0.0.1", port: 0 });
        closeListener = listening.close;
        return listening.url;
      })();
      return started;
    },
    async close() {
      await started?.catch(() => {});
      await closeListener?.();
      await sandbox?.close();
    },
  };
}
