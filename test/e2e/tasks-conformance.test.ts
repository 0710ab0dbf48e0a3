/**
 * The conformance suite's MCP Tasks scenarios (`@modelcontextprotocol/conformance` 0.2.0-alpha.12,
 * a dev dependency) against the built CLI over loopback HTTP. Most checks call the suite's fixture
 * tools (`greet`, `slow_compute`, `failing_job`), which a real server does not have; every check
 * that needs none must pass, and every other may fail only for a missing fixture tool.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, ROOT, type Started, startHttpCli } from "../helpers/cli.js";

const SUITE = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

/** Per scenario, the checks that need no fixture tool: each must pass. */
const FIXTURE_FREE: Record<string, string[]> = {
  "tasks-capability-negotiation": ["tasks-extension-advertised", "sep-2663-tasks-methods-non-declaring"],
  "tasks-dispatch-and-envelope": [
    "sep-2663-tasks-result-removed-method-not-found",
    "tasks-removed-tasks-list",
    "sep-2663-tasks-get-invalid-task-id-32602",
  ],
  "tasks-request-headers": ["tasks-headers-reject-mismatched-method"],
};
/** How a check that needed a fixture tool fails against a server without one. */
const NO_FIXTURE = /Tool (greet|slow_compute|failing_job) not found|fixture from Check \d+ unavailable/;

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

const iso = isolatedEnv();
const out = mkdtempSync(join(tmpdir(), "conformance-"));
let cli: Started;

beforeAll(async () => {
  cli = await startHttpCli(["--sandbox"], iso.env);
}, 30_000);

afterAll(async () => {
  await cli?.stop();
  iso.cleanup();
  rmSync(out, { recursive: true, force: true });
});

async function run(scenario: string): Promise<Check[]> {
  const dir = join(out, scenario);
  await promisify(execFile)(
    process.execPath,
    [SUITE, "server", "--url", cli.url, "--scenario", scenario, "-o", dir],
    {
      timeout: 90_000,
    },
  ).catch((error: { stdout?: string }) => {
    // The suite exits non-zero when any check fails (the fixture ones do): the checks decide here.
    if (error.stdout === undefined) throw error;
  });
  const [runDir] = readdirSync(dir);
  return JSON.parse(readFileSync(join(dir, runDir ?? "", "checks.json"), "utf8")) as Check[];
}

describe("the conformance suite's MCP Tasks scenarios, through the built CLI", () => {
  it.each(Object.keys(FIXTURE_FREE))(
    "%s: the checks that need no fixture tool pass",
    async (scenario) => {
      const checks = await run(scenario);
      const byId = new Map(checks.map((c) => [c.id, c]));
      for (const id of FIXTURE_FREE[scenario] ?? []) {
        expect(byId.get(id)?.status, `${id}: ${byId.get(id)?.errorMessage ?? "not run"}`).toBe("SUCCESS");
      }
      expect(byId.get("wire-schema-valid")?.status ?? "SUCCESS").toBe("SUCCESS");
      const otherwise = checks.filter(
        (c) => c.status === "FAILURE" && !NO_FIXTURE.test(c.errorMessage ?? ""),
      );
      expect(otherwise).toEqual([]);
    },
    120_000,
  );
});
