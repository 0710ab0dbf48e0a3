import { describe, expect, it } from "vitest";
import { loadConfig, parseCommand } from "../../src/config/index.js";
import { BASE, refusal } from "./config-helpers.js";

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
