/** Rules the list of settings brings: store URIs as the ledger reads them, flags, pasted keys, directories. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, parseCommand } from "../../src/config/index.js";

const KEY = `lgk_${"0123456789abcdef".repeat(4)}`;
const BASE = { GENERATION_BASE_URL: "https://api.example.com/", GENERATION_API_KEY: KEY };

function message(argv: string[], env: NodeJS.ProcessEnv): string {
  try {
    parseCommand(argv, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("store URIs", () => {
  it.each([
    "sqlite://~/generation/ledger.sqlite",
    "sqlite:///var/lib/generation/ledger.sqlite?busyTimeoutMs=100",
    "postgres://ledger:pw@db.internal:5432/ledger?durability=relaxed",
    "postgresql://db.internal/ledger",
    "redis://cache.internal:6379/0",
    "rediss://:pw@cache.internal:6380?durability=strict",
  ])("accepts %s as given", (store) => {
    expect(loadConfig([], { ...BASE, GENERATION_STORE: store }).store).toBe(store);
  });

  it.each(["mysql://u:pw@db/x", "mongodb://db/x", "valkey://cache", "etcd://h:2379"])(
    "refuses %s at start, naming the scheme only",
    (store) => {
      const text = message([], { ...BASE, GENERATION_STORE: store });
      expect(text).toMatch(/^GENERATION_STORE: unsupported store [a-z]+:\/\//);
      expect(text).not.toContain("pw@");
      expect(text).not.toContain("db/x");
    },
  );

  it("refuses a durability it does not know", () => {
    expect(message(["--store", "redis://h?durability=maybe"], BASE)).toMatch(
      /^--store: durability must be 'strict' or 'relaxed'/,
    );
  });
});

describe("flags", () => {
  it("names an unknown flag, suggests the nearest, and points to --help", () => {
    expect(message(["--max-gem", "3"], BASE)).toBe(
      "command line: unknown option '--max-gem'; did you mean --max-gems? (see --help)",
    );
    expect(message(["-x"], BASE)).toBe("command line: unknown option '-x' (see --help)");
  });

  it("does not repeat an unknown flag that does not look like one", () => {
    const text = message(["--zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"], BASE);
    expect(text).toMatch(/^command line: unknown option \(not shown/);
    expect(text).not.toContain("zzzz");
  });

  it("says which flag lacks a value or should have none", () => {
    expect(message(["--sandbox", "--port"], {})).toBe("--port: needs a value (see --help)");
    expect(message(["--sandbox=yes"], {})).toBe("--sandbox: takes no value (see --help)");
  });

  it("reads --flag=value as well as --flag value", () => {
    expect(loadConfig(["--sandbox", "--port=0", "--max-gems=9"], {})).toMatchObject({ port: 0, maxGems: 9 });
  });
});

describe("a key pasted into the wrong setting", () => {
  it.each([
    ["GENERATION_BASE_URL", `https://api.example.com/${KEY}`],
    ["GENERATION_BASE_URL", `https://api.example.com/v1/${KEY.slice(4).toUpperCase()}`],
    ["GENERATION_BASE_URL", `https://api.example.com/${encodeURIComponent(KEY)}`],
    ["GENERATION_EXTRACTION_MODEL", KEY],
    ["GENERATION_OUTPUT_DIR", `/home/u/${KEY}`],
  ])("is refused in %s", (name, value) => {
    const text = message([], { ...BASE, [name]: value });
    expect(text).toMatch(new RegExp(`^${name}: appears to contain an API key`));
  });

  it("is refused in GENERATION_FILES by position", () => {
    const text = message([], {
      ...BASE,
      GENERATION_FILES: ["/data", `/home/${KEY.slice(4)}`].join(delimiter),
    });
    expect(text).toMatch(/^GENERATION_FILES: entry 2 of 2 appears to contain an API key/);
  });
});

describe("GENERATION_FILES directories that are not there", () => {
  const dir = mkdtempSync(join(tmpdir(), "generation-mcp-settings-"));
  const file = join(dir, "a-file");
  writeFileSync(file, "");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("are reported by position, without the path, and the others kept", () => {
    const files = [dir, join(dir, "typo"), file].join(delimiter);
    const command = parseCommand([], { ...BASE, GENERATION_FILES: files });
    if (command.name !== "serve") throw new Error("expected serve");
    expect(command.config.files).toEqual([dir, join(dir, "typo"), file]);
    expect(command.warnings).toEqual([
      "GENERATION_FILES: entry 2 of 3 does not exist; tools will not read or save there",
      "GENERATION_FILES: entry 3 of 3 is not a directory; tools will not read or save there",
    ]);
    for (const warning of command.warnings) expect(warning).not.toContain(dir);
  });

  it("are named by the flag when the flag gave them, and nothing is said when all exist", () => {
    const flagged = parseCommand(["--files", join(dir, "nope")], BASE);
    expect(flagged.name === "serve" && flagged.warnings).toEqual([
      "--files: entry 1 of 1 does not exist; tools will not read or save there",
    ]);
    const fine = parseCommand([], { ...BASE, GENERATION_FILES: dir });
    expect(fine.name === "serve" && fine.warnings).toEqual([]);
  });
});
