/**
 * Configuration as a user meets it: the built CLI started with settings that are wrong in several
 * ways at once. Every malformed setting is reported in the same run (exit 2, one line each, never a
 * value but a harmless number), whitespace around a value or a variable's name is named as such,
 * and an output directory outside GENERATION_FILES is reported at start.
 */

import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, connectCli, isolatedEnv, runCli } from "../helpers/cli.js";

const iso = isolatedEnv();
afterAll(() => iso.cleanup());
const KEY = `lgk_${"c0ffee42".repeat(8)}`;
const lines = (stderr: string): string[] => stderr.trimEnd().split("\n");

describe("configuration errors (built CLI)", () => {
  it("reports every malformed setting at once, one line each, with exit 2 and no value", async () => {
    const r = await runCli(["--transport", "ws", "--max-gem", "3"], {
      ...iso.env,
      GENERATION_BASE_URL: "ftp://user:hunter2@example.com",
      GENERATION_API_KEY: KEY.toUpperCase(),
      GENERATION_STORE: "mongodb://admin:s3cret@db.example/x",
      GENERATION_WAIT_SECONDS: "soon",
      GENERATION_MAX_GEMS: "1".repeat(64),
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    const got = lines(r.stderr);
    expect(got.every((l) => l.startsWith("generation-mcp: "))).toBe(true);
    for (const name of [
      "unknown option '--max-gem'",
      "--transport",
      "GENERATION_BASE_URL",
      "GENERATION_API_KEY",
      "GENERATION_STORE",
      "GENERATION_WAIT_SECONDS",
      "GENERATION_MAX_GEMS",
    ]) {
      expect(
        got.filter((l) => l.includes(name)),
        name,
      ).toHaveLength(1);
    }
    expect(got).toHaveLength(7);
    for (const secret of ["hunter2", "s3cret", "C0FFEE", "c0ffee", "1111111111"]) {
      expect(r.stderr).not.toContain(secret);
    }
  });

  it("says a value starts or ends with whitespace, without showing it", async () => {
    const r = await runCli([], {
      ...iso.env,
      GENERATION_BASE_URL: "https://api.example.com",
      GENERATION_WAIT_SECONDS: "45 ",
      GENERATION_API_KEY: ` ${KEY}\n`,
    });
    expect(r.code).toBe(2);
    const got = lines(r.stderr);
    expect(got).toHaveLength(2);
    expect(got[1]).toMatch(/^generation-mcp: GENERATION_WAIT_SECONDS: starts or ends with whitespace/);
    expect(got[0]).toMatch(
      /^generation-mcp: GENERATION_API_KEY: starts or ends with whitespace .*value not shown/,
    );
    expect(r.stderr).not.toContain("c0ffee");
  });

  it("says a variable's name carries whitespace when the setting then reads as unset", async () => {
    const r = await runCli([], {
      ...iso.env,
      GENERATION_BASE_URL: "https://api.example.com",
      "GENERATION_API_KEY ": KEY,
    });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual([
      expect.stringMatching(
        /^generation-mcp: GENERATION_API_KEY: required on stdio.*a variable named GENERATION_API_KEY with whitespace around the name is set: remove the whitespace$/,
      ),
    ]);
    expect(r.stderr).not.toContain("c0ffee");
  });

  it("shows a harmless number out of range, and says what the range is", async () => {
    const r = await runCli(["--sandbox"], { ...iso.env, GENERATION_WAIT_SECONDS: "900" });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "generation-mcp: GENERATION_WAIT_SECONDS: 900 is above 600; expected seconds from 0 to 600\n",
    );
  });

  it("reports an output directory outside GENERATION_FILES at start, and still serves", async () => {
    const files = path.join(iso.dir, "files");
    const env = { ...iso.env, GENERATION_FILES: iso.dir, GENERATION_OUTPUT_DIR: "/var/generated-elsewhere" };
    const outside = await connectCli({ args: [CLI, "--sandbox"], env });
    try {
      const { tools } = await outside.client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      expect(outside.stderr()).toMatch(
        /generation-mcp: GENERATION_OUTPUT_DIR: outside every directory of GENERATION_FILES, so outputs cannot be saved/,
      );
    } finally {
      await outside.client.close();
    }
    const inside = await connectCli({
      args: [CLI, "--sandbox"],
      env: { ...env, GENERATION_OUTPUT_DIR: path.join(files, "out") },
    });
    try {
      await inside.client.listTools();
      expect(inside.stderr()).not.toMatch(/GENERATION_OUTPUT_DIR/);
    } finally {
      await inside.client.close();
    }
  });
});
