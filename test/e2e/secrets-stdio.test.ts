/**
 * A key pasted into the wrong setting never reaches stderr: every setting, by variable and by flag,
 * refused by the built CLI with exit 2 and one line that holds no part of the key, whether it was
 * pasted whole, as its bare hex, or upper-cased.
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { isolatedEnv, runCli } from "../helpers/cli.js";

const HEX = randomBytes(32).toString("hex");
const FORMS = {
  key: `lgk_${HEX}`,
  "bare hex": HEX,
  "upper-cased": `lgk_${HEX}`.toUpperCase(),
} as const;
const iso = isolatedEnv();
afterAll(() => iso.cleanup());
/** A configuration that would start: each case spoils one setting of it. */
const VALID = {
  ...iso.env,
  GENERATION_BASE_URL: "https://api.example.com",
  GENERATION_API_KEY: `lgk_${"0".repeat(64)}`,
};

type Case = [name: string, build: (secret: string) => { args?: string[]; env?: Record<string, string> }];
const CASES: Case[] = [
  ["GENERATION_BASE_URL as the value", (k) => ({ env: { GENERATION_BASE_URL: k } })],
  ["GENERATION_BASE_URL path", (k) => ({ env: { GENERATION_BASE_URL: `https://api.example.com/${k}` } })],
  [
    "GENERATION_BASE_URL password and bad port",
    (k) => ({ env: { GENERATION_BASE_URL: `https://user:${k}@api.example.com:99999` } }),
  ],
  [
    "GENERATION_BASE_URL password",
    (k) => ({ env: { GENERATION_BASE_URL: `https://u:${k}@api.example.com` } }),
  ],
  ["GENERATION_BASE_URL scheme", (k) => ({ env: { GENERATION_BASE_URL: `${k}://api.example.com` } })],
  ["--base-url", (k) => ({ args: ["--base-url", k] })],
  ["GENERATION_API_KEY malformed", (k) => ({ env: { GENERATION_API_KEY: `${k}x` } })],
  ["GENERATION_STORE as the value", (k) => ({ env: { GENERATION_STORE: k } })],
  ["GENERATION_STORE scheme", (k) => ({ env: { GENERATION_STORE: `${k}://db.example/x` } })],
  [
    "GENERATION_STORE password, bad port",
    (k) => ({ env: { GENERATION_STORE: `postgres://u:${k}@db:99999/x` } }),
  ],
  ["GENERATION_STORE other scheme", (k) => ({ env: { GENERATION_STORE: `mysql://u:${k}@db/x` } })],
  ["GENERATION_STORE relative sqlite", (k) => ({ env: { GENERATION_STORE: `sqlite://${k}` } })],
  ["--store", (k) => ({ args: ["--store", `redis://:${k}@/`] })],
  ["GENERATION_FILES relative", (k) => ({ env: { GENERATION_FILES: `${iso.dir}:${k}` } })],
  ["GENERATION_FILES absolute", (k) => ({ env: { GENERATION_FILES: `/${k}` } })],
  ["--files", (k) => ({ args: ["--files", k] })],
  ["GENERATION_OUTPUT_DIR", (k) => ({ env: { GENERATION_OUTPUT_DIR: k } })],
  ["--output-dir absolute", (k) => ({ args: ["--output-dir", `/${k}`] })],
  ["GENERATION_MAX_GEMS", (k) => ({ env: { GENERATION_MAX_GEMS: k } })],
  ["--max-gems", (k) => ({ args: ["--max-gems", k] })],
  ["GENERATION_CONFIRM_ABOVE_GEMS", (k) => ({ env: { GENERATION_CONFIRM_ABOVE_GEMS: k } })],
  ["GENERATION_EXTRACTION_MODEL", (k) => ({ env: { GENERATION_EXTRACTION_MODEL: k } })],
  ["--extraction-model with a space", (k) => ({ args: ["--extraction-model", `m ${k}`] })],
  ["GENERATION_WAIT_SECONDS", (k) => ({ env: { GENERATION_WAIT_SECONDS: k } })],
  ["--transport", (k) => ({ args: ["--transport", k] })],
  ["--host", (k) => ({ args: ["--host", `${k}/`] })],
  ["--host as a host name", (k) => ({ args: ["--transport", "http", "--host", `${k}.example`] })],
  ["--port", (k) => ({ args: ["--port", k] })],
  ["sandbox --port", (k) => ({ args: ["sandbox", "--port", k] })],
  ["an unknown flag", (k) => ({ args: [`--${k}`] })],
  ["an unknown flag with a value", (k) => ({ args: [`--${k}=1`] })],
  ["a switch given a value", (k) => ({ args: [`--sandbox=${k}`] })],
  ["a command", (k) => ({ args: [k] })],
  ["an extra argument", (k) => ({ args: ["sandbox", k] })],
];

/** Any 12 characters of the key's hex, in any case, would be a leak. */
function leaks(text: string): string | undefined {
  const lower = text.toLowerCase();
  for (let i = 0; i + 12 <= HEX.length; i++) {
    if (lower.includes(HEX.slice(i, i + 12))) return HEX.slice(i, i + 12);
  }
  return undefined;
}

describe("configuration errors of the built CLI", () => {
  it.each(CASES)("never show a key pasted into %s", async (_name, build) => {
    const runs = await Promise.all(
      Object.values(FORMS).map((secret) => {
        const { args = [], env = {} } = build(secret);
        return runCli(args, { ...VALID, ...env }, 10_000);
      }),
    );
    for (const r of runs) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(/^generation-mcp: (GENERATION_[A-Z_]+|--[a-z-]+|command line|command): /);
      expect(leaks(r.stderr)).toBeUndefined();
    }
  });
});
