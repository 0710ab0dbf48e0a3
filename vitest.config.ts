import { defineConfig } from "vitest/config";

/**
 * Three projects (docs/architecture.md#which-tests-to-run-when):
 * - unit: in-process and fast, on fake time where code waits (`npm run test:unit`, under 30 s);
 * - e2e: the built CLI or other processes spawned, databases as processes, real time across them;
 * - browser: the viewer driven in Chromium.
 * A file is in exactly one (test/test-projects.test.ts checks it). The e2e and browser projects
 * rebuild dist/cli.js when it is stale (test/globalSetup.ts); unit tests import src/ and skip it.
 */

/**
 * Tests outside test/e2e that spawn processes (the ledger's lock contention, the built CLI over
 * each store, ffmpeg, mkfifo). One exception stays in unit: the ledger's store tests run on SQLite
 * and also on PostgreSQL and a redis-server of their own where installed (test/ledger/stores.ts),
 * about 4 s in all, and the inner loop keeps the ledger's tests.
 */
export const E2E_ELSEWHERE = [
  "test/ledger/processes.test.ts",
  "test/ledger/stores.test.ts",
  "test/sandbox/media.test.ts",
  "test/calls/files/files-race.test.ts",
];

export const PROJECT_FILES: Record<"unit" | "e2e" | "browser", { include: string[]; exclude: string[] }> = {
  unit: { include: ["test/**/*.test.ts"], exclude: ["test/e2e/**", "test/viewer/**", ...E2E_ELSEWHERE] },
  e2e: { include: ["test/e2e/**/*.test.ts", ...E2E_ELSEWHERE], exclude: [] },
  browser: { include: ["test/viewer/**/*.test.ts"], exclude: [] },
};

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: ["default"],
    projects: [
      {
        extends: true,
        // One module graph per worker, not per file: importing src/ again for each of 70-odd files
        // cost more than the tests themselves. The unit tests leave no global state behind (fake
        // timers are restored after each test, process.env after proxy.test.ts).
        // Its own worker count needs its own group (vitest runs groups in order): unit runs first.
        test: {
          name: "unit",
          ...PROJECT_FILES.unit,
          isolate: false,
          maxWorkers: "100%",
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          globalSetup: ["test/globalSetup.ts"],
          ...PROJECT_FILES.e2e,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: "browser",
          globalSetup: ["test/globalSetup.ts"],
          ...PROJECT_FILES.browser,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
