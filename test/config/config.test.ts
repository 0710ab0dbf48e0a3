import { delimiter } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, parseCommand } from "../../src/config/index.js";

const KEY = `lgk_${"0123456789abcdef".repeat(4)}`;
const BASE = { GENERATION_BASE_URL: "https://api.example.com/", GENERATION_API_KEY: KEY };

function refusal(argv: string[], env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(argv, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("applies the defaults of the README's Configuration table", () => {
    const c = loadConfig([], { ...BASE, HOME: "/home/u" });
    expect(c).toMatchObject({
      transport: "stdio",
      host: "127.0.0.1",
      port: 3333,
      sandbox: false,
      baseUrl: "https://api.example.com",
      apiKey: KEY,
      extractionModel: "service-video-extract",
      defaultWaitSeconds: 45,
    });
    expect(c.store).toMatch(/^sqlite:\/\/.*generation-mcp.*ledger\.sqlite$/);
    expect(c.files).toHaveLength(1);
    expect(c.remoteUsers).toBe(false);
    // Unset: generated/ under the first directory in force, decided per call (src/calls/saving.ts).
    expect(c.outputDir).toBeUndefined();
    expect(c.maxGems).toBeUndefined();
    expect(c.confirmAboveGems).toBeUndefined();
  });

  it("reads every variable", () => {
    const c = loadConfig(["--transport", "http", "--host", "0.0.0.0", "--port", "0"], {
      ...BASE,
      GENERATION_STORE: "sqlite:///tmp/x.sqlite",
      GENERATION_FILES: ["/a", "/b"].join(delimiter),
      GENERATION_OUTPUT_DIR: "/out",
      GENERATION_MAX_GEMS: "500",
      GENERATION_EXTRACTION_MODEL: "other-model",
      GENERATION_CONFIRM_ABOVE_GEMS: "100",
      GENERATION_WAIT_SECONDS: "0",
    });
    expect(c).toMatchObject({
      transport: "http",
      host: "0.0.0.0",
      port: 0,
      store: "sqlite:///tmp/x.sqlite",
      files: ["/a", "/b"],
      outputDir: "/out",
      maxGems: 500,
      extractionModel: "other-model",
      confirmAboveGems: 100,
      defaultWaitSeconds: 0,
    });
  });

  it("gives remote users (--auth oauth, or HTTP beyond loopback) no server files unless GENERATION_FILES is set", () => {
    const http = ["--transport", "http"];
    const oauth = {
      GENERATION_PUBLIC_URL: "https://mcp.example.com",
      GENERATION_AUTH_SECRET: "A".repeat(44),
    };
    const local = [
      loadConfig([], BASE),
      loadConfig(http, BASE),
      loadConfig([...http, "--host", "::1"], BASE),
    ];
    for (const c of local) expect([c.remoteUsers, c.files.length]).toEqual([false, 1]);
    const remote = [
      loadConfig([...http, "--host", "0.0.0.0"], BASE),
      loadConfig([...http, "--host", "192.0.2.7"], BASE),
      loadConfig([...http, "--auth", "oauth"], { ...BASE, ...oauth }),
    ];
    for (const c of remote) expect([c.remoteUsers, c.files]).toEqual([true, []]);
    const set = loadConfig([...http, "--host", "0.0.0.0"], { ...BASE, GENERATION_FILES: "/srv/media" });
    expect([set.remoteUsers, set.files]).toEqual([true, ["/srv/media"]]);
  });

  it("lets flags override variables", () => {
    const c = loadConfig(
      [
        "--base-url",
        "http://127.0.0.1:9/",
        "--max-gems",
        "7",
        "--wait-seconds",
        "600",
        "--store",
        "redis://h",
      ],
      { ...BASE, GENERATION_MAX_GEMS: "5", GENERATION_WAIT_SECONDS: "10", GENERATION_STORE: "sqlite:///x" },
    );
    expect(c).toMatchObject({
      baseUrl: "http://127.0.0.1:9",
      maxGems: 7,
      defaultWaitSeconds: 600,
      store: "redis://h",
    });
  });

  it("needs neither base URL nor key with --sandbox, and ignores the real ones", () => {
    const c = loadConfig(["--sandbox"], { GENERATION_BASE_URL: "nonsense", GENERATION_API_KEY: "bad" });
    expect(c.sandbox).toBe(true);
    expect(c.baseUrl).toBeUndefined();
    expect(c.apiKey).toBeUndefined();
  });

  it("lets HTTP start without a key (sessions bring theirs)", () => {
    const c = loadConfig(["--transport", "http"], { GENERATION_BASE_URL: "https://x.example" });
    expect(c.apiKey).toBeUndefined();
  });

  it("treats empty variables as unset", () => {
    const c = loadConfig([], { ...BASE, GENERATION_MAX_GEMS: "", GENERATION_FILES: "" });
    expect(c.maxGems).toBeUndefined();
    expect(c.files).toHaveLength(1);
  });

  const malformed: [string, string[], NodeJS.ProcessEnv, RegExp][] = [
    ["missing base URL", [], { GENERATION_API_KEY: KEY }, /^GENERATION_BASE_URL: required/],
    [
      "base URL not a URL",
      [],
      { ...BASE, GENERATION_BASE_URL: "api.example.com" },
      /^GENERATION_BASE_URL: expected an http\(s\) URL/,
    ],
    [
      "base URL ftp",
      [],
      { ...BASE, GENERATION_BASE_URL: "ftp://x.example" },
      /^GENERATION_BASE_URL: .*scheme 'ftp'/,
    ],
    [
      "base URL with credentials",
      [],
      { ...BASE, GENERATION_BASE_URL: "https://u:p@x.example" },
      /^GENERATION_BASE_URL: must not carry credentials/,
    ],
    ["base URL flag", ["--base-url", "x"], BASE, /^--base-url: expected an http\(s\) URL/],
    [
      "missing key on stdio",
      [],
      { GENERATION_BASE_URL: "https://x.example" },
      /^GENERATION_API_KEY: required on stdio/,
    ],
    [
      "key uppercase",
      [],
      { ...BASE, GENERATION_API_KEY: KEY.toUpperCase() },
      /^GENERATION_API_KEY: expected 'lgk_' followed by 64/,
    ],
    [
      "key short on http",
      ["--transport", "http"],
      { ...BASE, GENERATION_API_KEY: "lgk_abc" },
      /^GENERATION_API_KEY: expected/,
    ],
    ["transport", ["--transport", "ws"], BASE, /^--transport: expected 'stdio' or 'http'$/],
    ["port text", ["--port", "http"], BASE, /^--port: expected an integer from 0 to 65535/],
    [
      "port too big",
      ["--port", "70000"],
      BASE,
      /^--port: 70000 is above 65535; expected an integer from 0 to 65535/,
    ],
    ["host", ["--host", "a b/c"], BASE, /^--host: expected a host name or IP address/],
    [
      "store",
      [],
      { ...BASE, GENERATION_STORE: "/var/ledger.sqlite" },
      /^GENERATION_STORE: expected a store URI/,
    ],
    [
      "store scheme",
      [],
      { ...BASE, GENERATION_STORE: "foo://x" },
      /^GENERATION_STORE: unsupported store foo:\/\//,
    ],
    [
      "store relative",
      [],
      { ...BASE, GENERATION_STORE: "sqlite://ledger.sqlite" },
      /^GENERATION_STORE: expected an absolute SQLite path/,
    ],
    ["store flag", ["--store", "memory"], BASE, /^--store: expected a store URI/],
    [
      "files relative",
      [],
      { ...BASE, GENERATION_FILES: "rel/dir" },
      /^GENERATION_FILES: expected absolute directories/,
    ],
    [
      "output relative",
      [],
      { ...BASE, GENERATION_OUTPUT_DIR: "out" },
      /^GENERATION_OUTPUT_DIR: expected an absolute directory/,
    ],
    [
      "max gems negative",
      [],
      { ...BASE, GENERATION_MAX_GEMS: "-1" },
      /^GENERATION_MAX_GEMS: -1 is below 0; expected an integer from 0 to 1000000000$/,
    ],
    [
      "max gems too big",
      [],
      { ...BASE, GENERATION_MAX_GEMS: "1000000001" },
      /^GENERATION_MAX_GEMS: 1000000001 is above 1000000000; expected an integer/,
    ],
    [
      "max gems fraction",
      [],
      { ...BASE, GENERATION_MAX_GEMS: "1.5" },
      /^GENERATION_MAX_GEMS: 1\.5 is not a whole number; expected an integer/,
    ],
    [
      "confirm",
      [],
      { ...BASE, GENERATION_CONFIRM_ABOVE_GEMS: "lots" },
      /^GENERATION_CONFIRM_ABOVE_GEMS: expected an integer/,
    ],
    [
      "model",
      [],
      { ...BASE, GENERATION_EXTRACTION_MODEL: "a b" },
      /^GENERATION_EXTRACTION_MODEL: expected a model ID/,
    ],
    [
      "model long",
      [],
      { ...BASE, GENERATION_EXTRACTION_MODEL: "m".repeat(151) },
      /^GENERATION_EXTRACTION_MODEL: expected a model ID/,
    ],
    [
      "wait too long",
      [],
      { ...BASE, GENERATION_WAIT_SECONDS: "601" },
      /^GENERATION_WAIT_SECONDS: 601 is above 600; expected seconds from 0 to 600/,
    ],
    [
      "wait text",
      [],
      { ...BASE, GENERATION_WAIT_SECONDS: "soon" },
      /^GENERATION_WAIT_SECONDS: expected seconds/,
    ],
    [
      "wait flag",
      ["--wait-seconds", "-3"],
      BASE,
      /^--wait-seconds: -3 is below 0; expected seconds from 0 to 600$/,
    ],
    ["unknown flag", ["--verbose"], BASE, /^command line: .*--verbose.*\(see --help\)$/],
    ["unknown command", ["serve"], BASE, /^command: unknown command 'serve'/],
  ];

  it.each(malformed)("refuses %s with one line naming it", (_name, argv, env, pattern) => {
    const error = refusal(argv, env);
    expect(error.message).toMatch(pattern);
    expect(error.message).not.toContain("\n");
  });

  it("never echoes a store URI, which may carry a password", () => {
    const error = refusal([], { ...BASE, GENERATION_STORE: "ftp://user:hunter2@db.example/x" });
    expect(error.message).not.toContain("hunter2");
  });

  it("never echoes a malformed key", () => {
    const secret = `lgk_${"A".repeat(64)}`;
    const error = refusal([], { ...BASE, GENERATION_API_KEY: secret });
    expect(error.message).not.toContain(secret);
    expect(error.message).not.toContain("AAAA");
  });
});

describe("parseCommand", () => {
  it("recognises help, version and the sandbox subcommand", () => {
    expect(parseCommand(["--help"], {})).toEqual({ name: "help" });
    expect(parseCommand(["-v"], {})).toEqual({ name: "version" });
    expect(parseCommand(["sandbox"], {})).toEqual({ name: "sandbox", host: "127.0.0.1", port: 3334 });
    expect(parseCommand(["sandbox", "--port", "0"], {})).toEqual({
      name: "sandbox",
      host: "127.0.0.1",
      port: 0,
    });
  });

  it("needs no service settings for help or the sandbox", () => {
    expect(parseCommand(["sandbox"], { GENERATION_BASE_URL: "bad" }).name).toBe("sandbox");
  });

  it("refuses serving flags on the sandbox subcommand", () => {
    expect(() => parseCommand(["sandbox", "--transport", "http"], {})).toThrow(
      /^--transport: not accepted by 'sandbox'/,
    );
  });

  it("keeps the default extraction model equal to the sandbox's", async () => {
    const { SANDBOX_EXTRACTION_MODEL } = await import("../../src/sandbox/sandbox.js");
    expect(loadConfig(["--sandbox"], {}).extractionModel).toBe(SANDBOX_EXTRACTION_MODEL);
  });
});

describe("every problem at once", () => {
  it("lists each malformed setting on its own line, and a missing one only when not refused already", () => {
    const error = refusal(["--port", "99999"], {
      GENERATION_BASE_URL: "mailto:x",
      GENERATION_API_KEY: "lgk_short",
      GENERATION_MAX_GEMS: "-1",
    });
    expect(error.lines).toEqual([
      expect.stringMatching(/^--port: 99999 is above 65535/),
      expect.stringMatching(/^GENERATION_BASE_URL: expected an http\(s\) URL/),
      expect.stringMatching(/^GENERATION_API_KEY: expected 'lgk_'/),
      expect.stringMatching(/^GENERATION_MAX_GEMS: -1 is below 0; expected an integer/),
    ]);
    expect(error.message.split("\n")).toEqual(error.lines);
  });

  it("names whitespace around a value only when the trimmed value would do", () => {
    expect(refusal([], { ...BASE, GENERATION_WAIT_SECONDS: "\t30" }).message).toBe(
      "GENERATION_WAIT_SECONDS: starts or ends with whitespace (a space, tab or line break); remove it (value not shown)",
    );
    expect(refusal([], { ...BASE, GENERATION_WAIT_SECONDS: " soon " }).message).toMatch(
      /^GENERATION_WAIT_SECONDS: expected seconds/,
    );
  });

  it("shows a plain number out of range the same way for every numeric setting", () => {
    const cases: Array<[string[], Record<string, string>, string]> = [
      [[], { ...BASE, GENERATION_MAX_GEMS: "-5" }, "GENERATION_MAX_GEMS: -5 is below 0"],
      [[], { ...BASE, GENERATION_CONFIRM_ABOVE_GEMS: "-5" }, "GENERATION_CONFIRM_ABOVE_GEMS: -5 is below 0"],
      [[], { ...BASE, GENERATION_WAIT_SECONDS: "700" }, "GENERATION_WAIT_SECONDS: 700 is above 600"],
      [[], { ...BASE, GENERATION_WAIT_SECONDS: "-0.5" }, "GENERATION_WAIT_SECONDS: -0.5 is below 0"],
      [["--port", "70000"], BASE, "--port: 70000 is above 65535"],
      [["--port", "80.5"], BASE, "--port: 80.5 is not a whole number"],
      [["--max-gems", "2.25"], BASE, "--max-gems: 2.25 is not a whole number"],
    ];
    for (const [argv, env, start] of cases) expect(refusal(argv, env).message.startsWith(start)).toBe(true);
  });

  it("never shows a long number, which could be part of a key", () => {
    const message = refusal([], { ...BASE, GENERATION_MAX_GEMS: "9".repeat(64) }).message;
    expect(message).toBe("GENERATION_MAX_GEMS: expected an integer from 0 to 1000000000 (value not shown)");
    expect(refusal([], { ...BASE, GENERATION_MAX_GEMS: "2000000000" }).message).toBe(
      "GENERATION_MAX_GEMS: 2000000000 is above 1000000000; expected an integer from 0 to 1000000000",
    );
  });

  it("warns at start of an output directory outside GENERATION_FILES, never of the default", () => {
    const files = { ...BASE, GENERATION_FILES: "/srv/media" };
    const outside = parseCommand([], { ...files, GENERATION_OUTPUT_DIR: "/srv/media-out" });
    expect(outside.name === "serve" && outside.warnings.filter((w) => w.includes("OUTPUT"))).toEqual([
      expect.stringMatching(/^GENERATION_OUTPUT_DIR: outside every directory of GENERATION_FILES/),
    ]);
    const flag = parseCommand(["--output-dir", "/tmp/x"], files);
    expect(flag.name === "serve" && flag.warnings.some((w) => w.startsWith("--output-dir: outside"))).toBe(
      true,
    );
    const inside = parseCommand([], { ...files, GENERATION_OUTPUT_DIR: "/srv/media/out" });
    expect(inside.name === "serve" && inside.warnings.filter((w) => w.includes("OUTPUT"))).toEqual([]);
    const byDefault = parseCommand([], files);
    expect(byDefault.name === "serve" && byDefault.warnings.filter((w) => w.includes("OUTPUT"))).toEqual([]);
  });
});
