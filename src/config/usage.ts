/**
 * The words around the settings: `--help`, and the README's "Command line" and "Configuration"
 * tables (`npm run readme:config` writes them; a test fails when the README differs).
 */
import { DEFAULT_SANDBOX_PORT, SETTINGS, type Setting } from "./settings.js";

const INDENT = "      ";
const WIDTH = 100;

/** The commands: not settings, so listed here once for both `--help` and the README. */
const COMMANDS = [
  {
    usage: "generation-mcp [options]",
    help: "MCP server (stdio by default), for the service at GENERATION_BASE_URL",
    doc: "MCP server on stdio, for the service at `GENERATION_BASE_URL`",
  },
  {
    usage: "generation-mcp sandbox [--host H] [--port P]",
    help: `run only the simulated service over HTTP (default port ${DEFAULT_SANDBOX_PORT}); prints its base URL and key`,
    doc: `run only the simulated service over HTTP (default port ${DEFAULT_SANDBOX_PORT}), for other clients and tests; prints its base URL and key`,
  },
] as const;

const SWITCHES = [
  { names: "-h, --help", doc: "`--help`, `-h`", help: "this help" },
  { names: "-v, --version", doc: "`--version`, `-v`", help: "the version" },
] as const;

function flagOf(s: Setting): string | undefined {
  if (s.flag === undefined) return undefined;
  return s.placeholder === undefined ? `--${s.flag}` : `--${s.flag} ${s.placeholder}`;
}

/** Greedy word wrap, each line indented: usage lines stay readable in an 80-100 column terminal. */
function wrap(text: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && INDENT.length + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.map((l) => `${INDENT}${l}`).join("\n");
}

export function usage(): string {
  const commands = COMMANDS.map((c) => `  ${c.usage}\n${wrap(c.help)}`);
  const settings = SETTINGS.map((s) => {
    const names = [flagOf(s), s.env].filter((n) => n !== undefined).join(", ");
    return `  ${names}\n${wrap(s.help)}`;
  });
  const switches = SWITCHES.map((s) => `  ${s.names.padEnd(16)}${s.help}`);
  return [
    "generation-mcp: MCP server for a paid media-generation service",
    "",
    "Usage:",
    ...commands,
    "",
    "Options and environment variables (a flag overrides its variable; an empty variable is unset):",
    ...settings,
    ...switches,
    "",
  ].join("\n");
}

const code = (text: string): string => `\`${text.replaceAll("|", "\\|")}\``;
const cell = (text: string): string => text.replaceAll("|", "\\|");

/** The README's "Command line" table: the commands and the settings that have only a flag. */
export function commandLineTable(): string {
  const rows = [
    ...COMMANDS.map((c) => `| ${code(c.usage)} | ${cell(c.doc)} | |`),
    ...SETTINGS.filter((s) => s.env === undefined && s.flag !== undefined).map(
      (s) => `| ${code(flagOf(s) ?? "")} | ${cell(s.doc)} | ${cell(s.defaultDoc)} |`,
    ),
    ...SWITCHES.map((s) => `| ${s.doc} | ${s.help} | |`),
  ];
  return ["| invocation | what it does | default |", "|---|---|---|", ...rows].join("\n");
}

/** The README's "Configuration" table: every setting that has a variable. */
export function configurationTable(): string {
  const rows = SETTINGS.filter((s) => s.env !== undefined).map((s) => {
    const flag = s.flag === undefined ? "(none)" : code(`--${s.flag}`);
    return `| ${code(s.env ?? "")} | ${flag} | ${cell(s.doc)} | ${cell(s.defaultDoc)} |`;
  });
  return ["| variable | flag | meaning | default |", "|---|---|---|---|", ...rows].join("\n");
}

/** The README with each generated table put between its markers; unchanged when already current. */
export function withGeneratedTables(readme: string): string {
  const tables = { "command-line": commandLineTable(), configuration: configurationTable() };
  let out = readme;
  for (const [name, table] of Object.entries(tables)) {
    const begin = `<!-- generated:${name} (npm run readme:config) -->`;
    const end = `<!-- end:${name} -->`;
    const from = out.indexOf(begin);
    const to = out.indexOf(end);
    if (from === -1 || to < from) throw new Error(`README: markers for the ${name} table are missing`);
    out = `${out.slice(0, from + begin.length)}\n${table}\n${out.slice(to)}`;
  }
  return out;
}
