import { delimiter } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { BASE, KEY, refusal } from "./config-helpers.js";

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
    // Unset: generated/ under the first directory in force, decided per call (src/calls/paid/saving.ts).
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
