/**
 * What the MCP Tasks e2e files over HTTP share (test/e2e/tasks-http.test.ts,
 * test/e2e/tasks-2025.test.ts): the sandbox over loopback and the built CLI over HTTP on it, with
 * GENERATION_CONFIRM_ABOVE_GEMS=50. Above 50 Gems a client that can ask asks the user first (an
 * estimate from the catalog); a client that cannot is capped at 50, which these files' calls stay
 * under. Call it at a file's top level: it registers the file's beforeAll and afterAll, and fills
 * the object it returns in the first.
 */
import { afterAll, beforeAll } from "vitest";
import { runSandboxServer, SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { isolatedEnv, type Started, startHttpCli } from "./cli.js";

export interface TasksServer {
  service: Awaited<ReturnType<typeof runSandboxServer>>;
  cli: Started;
}

export function tasksServer(): TasksServer {
  const iso = isolatedEnv();
  const state = {} as TasksServer;
  beforeAll(async () => {
    state.service = await runSandboxServer({ host: "127.0.0.1", port: 0 });
    state.cli = await startHttpCli([], {
      ...iso.env,
      GENERATION_BASE_URL: state.service.url,
      GENERATION_API_KEY: SANDBOX_API_KEY,
      GENERATION_CONFIRM_ABOVE_GEMS: "50",
    });
  }, 30_000);
  afterAll(async () => {
    await state.cli?.stop();
    await state.service?.close();
    iso.cleanup();
  });
  return state;
}
