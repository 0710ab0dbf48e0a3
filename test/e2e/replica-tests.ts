/**
 * The deployment of balancer.ts for the tests of one file: vitest's hooks around it, kept apart so
 * that benchmarks can import balancer.ts without a test runner.
 */
import { afterAll, beforeAll } from "vitest";
import { runnableOrSkipped } from "../helpers/chromium.js";
import { available } from "../ledger/stores.js";
import { type Deployment, haproxyInstalled, startDeployment } from "./balancer.js";

/**
 * One deployment (startDeployment) for the tests of one file, with a sandbox key holding both
 * scopes: started before them where HAProxy is installed and PostgreSQL answers (else they skip,
 * loudly, and fail under CI), stopped after them. `ready`: whether they can run here at all.
 */
export function deploymentForTests(tests: string): {
  ready: boolean;
  current(): { d: Deployment; key: string } | undefined;
} {
  const ready = runnableOrSkipped(
    haproxyInstalled() ? undefined : "haproxy is not installed (apt-get install haproxy)",
    tests,
  );
  let running: { d: Deployment; key: string } | undefined;
  beforeAll(async () => {
    if (!ready || !(await available("postgres"))) return;
    const d = await startDeployment();
    running = { d, key: d.sandbox.addKey({ scopes: ["read", "generate"] }) };
  }, 60_000);
  afterAll(() => running?.d.stop());
  return { ready, current: () => running };
}
