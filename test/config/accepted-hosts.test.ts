/**
 * The host names an HTTP server accepts beyond its bind address's (GENERATION_PUBLIC_URL's, in
 * either auth mode, and GENERATION_ALLOWED_HOSTS), and the start lines for settings a mode ignores.
 */
import { describe, expect, it } from "vitest";
import { loadConfig, parseCommand, publicHostnames } from "../../src/config/index.js";
import { BASE, refusal } from "./config-helpers.js";

const HTTP = ["--transport", "http"];
const URL_ONLY = { GENERATION_BASE_URL: BASE.GENERATION_BASE_URL };

function warnings(argv: string[], env: NodeJS.ProcessEnv): string[] {
  const command = parseCommand(argv, env);
  if (command.name !== "serve") throw new Error("expected serve");
  return command.warnings;
}

describe("accepted host names", () => {
  it("key mode accepts GENERATION_PUBLIC_URL's host and the listed names, lowercased, brackets on IPv6", () => {
    const config = loadConfig(HTTP, {
      ...URL_ONLY,
      GENERATION_PUBLIC_URL: "https://mcp.example.com/mcp",
      GENERATION_ALLOWED_HOSTS: " MCP.internal.example , 10.0.0.2,[fd00::2], fd00::3 ",
    });
    expect(config.auth).toBe("key");
    expect(publicHostnames(config)).toEqual([
      "mcp.example.com",
      "mcp.internal.example",
      "10.0.0.2",
      "[fd00::2]",
      "[fd00::3]",
    ]);
  });

  it("names reached from elsewhere make the users remote (no server files unless GENERATION_FILES); loopback names do not", () => {
    const publicName = loadConfig(HTTP, { ...URL_ONLY, GENERATION_ALLOWED_HOSTS: "mcp.example.com" });
    expect(publicName.remoteUsers).toBe(true);
    expect(publicName.files).toEqual([]);
    const local = loadConfig(HTTP, { ...URL_ONLY, GENERATION_PUBLIC_URL: "http://127.0.0.1:3333" });
    expect(local.remoteUsers).toBe(false);
    expect(loadConfig(HTTP, URL_ONLY).allowedHosts).toBeUndefined();
  });

  it.for([
    "https://mcp.example.com",
    "mcp.example.com:443",
    "*.example.com",
    "mcp.example.com/mcp",
    "user@mcp.example.com",
    "-bad.example.com",
  ])("refuses %s by position, naming what is expected", (bad) => {
    const error = refusal(HTTP, { ...URL_ONLY, GENERATION_ALLOWED_HOSTS: `ok.example.com,${bad}` });
    expect(error.message).toMatch(
      /^GENERATION_ALLOWED_HOSTS: entry 2 of 2: expected a host name such as mcp\.example\.com/,
    );
  });

  it("refuses more than 32 names", () => {
    const many = Array.from({ length: 33 }, (_, i) => `h${i}.example.com`).join(",");
    expect(refusal(HTTP, { ...URL_ONLY, GENERATION_ALLOWED_HOSTS: many }).message).toMatch(
      /^GENERATION_ALLOWED_HOSTS: 33 names; at most 32/,
    );
  });
});

describe("settings the chosen mode ignores are said at start, one line each", () => {
  it("OAuth lifetimes in key mode (not its proxies, whose connections count in the total only); the key with --auth oauth", () => {
    expect(
      warnings(HTTP, { ...BASE, GENERATION_AUTH_ACCESS_TTL: "1d", GENERATION_TRUSTED_PROXIES: "10.0.0.2" }),
    ).toEqual(["GENERATION_AUTH_ACCESS_TTL: ignored with --auth key (it applies to --auth oauth)"]);
    const oauth = {
      ...BASE,
      GENERATION_AUTH: "oauth",
      GENERATION_PUBLIC_URL: "https://mcp.example.com",
      GENERATION_AUTH_SECRET: Buffer.alloc(32, 1).toString("base64"),
    };
    expect(warnings(HTTP, oauth)).toEqual([
      "GENERATION_API_KEY: ignored with --auth oauth (each user signs in with their own key)",
    ]);
  });

  it("HTTP settings on stdio, the service's with --sandbox, the key off loopback; never a value", () => {
    const stdio = warnings(["--port", "4000"], { ...BASE, GENERATION_PUBLIC_URL: "https://mcp.example.com" });
    expect(stdio).toEqual([
      "--port: ignored on stdio (it applies to --transport http)",
      "GENERATION_PUBLIC_URL: ignored on stdio (it applies to --transport http)",
    ]);
    expect(warnings(["--sandbox"], BASE)).toEqual([
      "GENERATION_BASE_URL: ignored with --sandbox (the embedded service and its own key are used)",
      "GENERATION_API_KEY: ignored with --sandbox (the embedded service and its own key are used)",
    ]);
    const off = warnings([...HTTP, "--host", "0.0.0.0"], BASE);
    expect(off).toContain(
      "GENERATION_API_KEY: ignored off loopback; each session must send its own Bearer key",
    );
    for (const line of [...stdio, ...off]) expect(line).not.toContain(BASE.GENERATION_API_KEY);
    expect(warnings(HTTP, BASE)).toEqual([]);
  });

  it("names inside GENERATION_HTTP_LIMITS: the HTTP pools on stdio, the sign-in figures in key mode, never the ledger's budget", () => {
    const limits = {
      ...BASE,
      GENERATION_HTTP_LIMITS: "sessions=9000,signInReserve=5000,ledgerRecordsPerKeyDay=9",
    };
    expect(warnings([], limits)).toEqual([
      "GENERATION_HTTP_LIMITS: sessions, signInReserve ignored on stdio (they apply to --transport http)",
    ]);
    expect(warnings(HTTP, limits)).toEqual([
      "GENERATION_HTTP_LIMITS: signInReserve ignored with --auth key (they apply to --auth oauth)",
    ]);
    expect(warnings([], { ...BASE, GENERATION_HTTP_LIMITS: "ledgerRecordsPerKeyDay=9" })).toEqual([]);
  });
});
