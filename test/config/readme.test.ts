/** The README's setting tables are generated: a setting changed in one place shows up everywhere. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OPTIONS } from "../../src/config/parse.js";
import { SETTINGS } from "../../src/config/settings.js";
import { configurationTable, usage, withGeneratedTables } from "../../src/config/usage.js";
import { ROOT } from "../helpers/cli.js";

const README = readFileSync(join(ROOT, "README.md"), "utf8");

describe("generated README tables", () => {
  it("match what the list of settings produces (run npm run readme:config)", () => {
    expect(withGeneratedTables(README)).toBe(README);
  });

  it("would notice a setting whose text changed", () => {
    const stale = README.replace("| `GENERATION_MAX_GEMS` |", "| `GENERATION_MAX_GEM` |");
    expect(stale).not.toBe(README);
    expect(withGeneratedTables(stale)).toBe(README);
  });

  it("refuses a README whose markers are gone instead of writing the table somewhere else", () => {
    expect(() => withGeneratedTables("# no markers here\n")).toThrow(/markers/);
  });

  it("list every variable, every flag in --help, and every flag as an option", () => {
    const table = configurationTable();
    const help = usage();
    for (const s of SETTINGS) {
      if (s.env !== undefined) {
        expect(table).toContain(`\`${s.env}\``);
        expect(help).toContain(s.env);
      }
      if (s.flag !== undefined) {
        expect(help).toContain(`--${s.flag}`);
        expect(OPTIONS[s.flag]?.type).toBe(s.placeholder === undefined ? "boolean" : "string");
      }
    }
  });
});
