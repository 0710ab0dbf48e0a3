/**
 * The command line and environment, read once at startup into a plain Config.
 * Every malformed value is refused here, with one line naming the variable or flag and what is
 * expected (never the value), so nothing half-configured ever talks to the service.
 */
import { statSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  type Config,
  DEFAULT_HOST,
  DEFAULT_SANDBOX_PORT,
  SANDBOX_FLAGS,
  SETTINGS,
  type Setting,
} from "./settings.js";
import { ConfigError, readHost, readPort } from "./values.js";

/** What the command line asks for: serve MCP, run only the sandbox, or print help/version. */
export type Command =
  | { name: "serve"; config: Config; warnings: string[] }
  | { name: "sandbox"; host: string; port: number }
  | { name: "help" }
  | { name: "version" };

type Option = { type: "string" | "boolean"; short?: string };
/** The options node's parseArgs knows: one per setting with a flag, plus help and version. */
export const OPTIONS: Readonly<Record<string, Option>> = {
  ...Object.fromEntries(
    SETTINGS.flatMap((s) =>
      s.flag === undefined ? [] : [[s.flag, { type: s.placeholder === undefined ? "boolean" : "string" }]],
    ),
  ),
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
};

type Values = Record<string, string | boolean | undefined>;

export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  const { values, positionals } = parseFlags(argv);
  if (values.help === true) return { name: "help" };
  if (values.version === true) return { name: "version" };
  const [sub, ...extra] = positionals;
  if (sub !== undefined && sub !== "sandbox") {
    throw new ConfigError("command", `unknown command ${shownWord(sub)} (expected no command, or 'sandbox')`);
  }
  if (extra[0] !== undefined) {
    throw new ConfigError("command", `unexpected argument ${shownWord(extra[0])} (see --help)`);
  }
  if (sub === "sandbox") {
    const other = Object.keys(values).find((k) => !SANDBOX_FLAGS.has(k));
    if (other !== undefined) {
      throw new ConfigError(`--${other}`, "not accepted by 'sandbox' (it takes only --host and --port)");
    }
    const { host, port } = values;
    return {
      name: "sandbox",
      host: typeof host === "string" ? readHost(host, "--host") : DEFAULT_HOST,
      port: typeof port === "string" ? readPort(port, "--port") : DEFAULT_SANDBOX_PORT,
    };
  }
  const config = buildConfig(values, env);
  return { name: "serve", config, warnings: directoryWarnings(config, sourceOf(values, env, "files")) };
}

/** The serving configuration; the agreed entry point for everything but the CLI's own commands. */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config {
  const command = parseCommand(argv, env);
  if (command.name !== "serve") throw new ConfigError("command", `'${command.name}' does not serve MCP`);
  return command.config;
}

/**
 * node's parseArgs in its lenient mode, then our own checks: its strict-mode messages are several
 * sentences about positionals and would quote whatever was typed, a pasted key included.
 */
function parseFlags(argv: readonly string[]): { values: Values; positionals: string[] } {
  const { values, positionals, tokens } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const option = OPTIONS[token.name];
    if (option === undefined) {
      throw new ConfigError("command line", `unknown option ${shownFlag(token.rawName)} (see --help)`);
    }
    if (option.type === "string" && token.value === undefined) {
      throw new ConfigError(`--${token.name}`, "needs a value (see --help)");
    }
    if (option.type === "boolean" && token.value !== undefined) {
      throw new ConfigError(`--${token.name}`, "takes no value (see --help)");
    }
  }
  return { values, positionals };
}

/** A typed flag name is shown only when it cannot be a pasted secret: short and plain. */
function shownFlag(raw: string): string {
  if (!/^--?[A-Za-z][A-Za-z0-9-]{0,31}$/.test(raw)) return "(not shown: it does not look like a flag)";
  const near = closestFlag(raw.replace(/^-+/, ""));
  return near === undefined ? `'${raw}'` : `'${raw}'; did you mean --${near}?`;
}

function shownWord(word: string): string {
  return /^[A-Za-z][A-Za-z0-9-]{0,31}$/.test(word) ? `'${word}'` : "(not shown)";
}

/** The known flag at most two edits away, if one is. */
function closestFlag(name: string): string | undefined {
  let best: { flag: string; distance: number } | undefined;
  for (const flag of Object.keys(OPTIONS)) {
    const distance = editDistance(name.toLowerCase(), flag);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { flag, distance };
  }
  return best?.flag;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      next[j] = Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + cost);
    }
    row = next;
  }
  return row[b.length] ?? 0;
}

/**
 * An MCPB host leaves `${user_config.NAME}` as it is when the user left that optional setting
 * empty and the manifest gives no default (see manifest.json): that is an unset setting.
 */
const UNSET_MCPB_OPTION = /^\$\{user_config\.[A-Za-z0-9_]+\}$/;

/** Where a setting's value comes from: its flag beats its variable; an empty variable is unset. */
function sourceOf(
  values: Values,
  env: NodeJS.ProcessEnv,
  key: keyof Config | Setting,
): { value: string | boolean; field: string } | undefined {
  // A Config field may have two settings (a secret, or the file holding it): pass the setting.
  const setting = typeof key === "string" ? SETTINGS.find((s) => s.key === key) : key;
  if (setting === undefined) return undefined;
  const fromFlag = setting.flag === undefined ? undefined : values[setting.flag];
  if (fromFlag !== undefined) return { value: fromFlag, field: `--${setting.flag}` };
  const fromEnv = setting.env === undefined ? undefined : env[setting.env];
  // Hosts often template variables in, leaving them empty: an empty one counts as unset.
  return fromEnv === undefined || fromEnv === "" || UNSET_MCPB_OPTION.test(fromEnv)
    ? undefined
    : { value: fromEnv, field: setting.env ?? "" };
}

function buildConfig(values: Values, env: NodeJS.ProcessEnv): Config {
  const config: Partial<Config> = {};
  const sandbox = values.sandbox === true;
  for (const setting of SETTINGS) {
    // In sandbox mode the embedded service and its own key are used: the real ones are ignored, not checked.
    if (sandbox && setting.serviceOnly) continue;
    const value = settingValue(setting, sourceOf(values, env, setting), config);
    if (value !== undefined) (config as Record<string, unknown>)[setting.key] = value;
  }
  if (!sandbox) requireService(config);
  if (config.auth === "oauth") requireOAuth(config);
  return config as Config;
}

/** OAuth needs the HTTP transport, the URL users reach, and the secret that encrypts their keys. */
function requireOAuth(config: Partial<Config>): void {
  if (config.transport !== "http") {
    throw new ConfigError("--auth", "'oauth' needs --transport http (stdio takes GENERATION_API_KEY)");
  }
  if (config.publicUrl === undefined) {
    throw new ConfigError(
      "GENERATION_PUBLIC_URL",
      "required with --auth oauth: the https URL users reach, such as https://mcp.example.com",
    );
  }
  if (config.authSecret === undefined) {
    throw new ConfigError(
      "GENERATION_AUTH_SECRET",
      "required with --auth oauth (or GENERATION_AUTH_SECRET_FILE): base64 of at least 32 random bytes, the same on every replica ('openssl rand -base64 32')",
    );
  }
}

function settingValue(
  setting: Setting,
  source: { value: string | boolean; field: string } | undefined,
  config: Readonly<Partial<Config>>,
): Config[keyof Config] | undefined {
  if (source === undefined) return setting.fallback?.(config);
  if (typeof source.value === "boolean" || setting.read === undefined) return source.value;
  return setting.read(source.value, source.field);
}

function requireService(config: Partial<Config>): void {
  if (config.baseUrl === undefined) {
    throw new ConfigError(
      "GENERATION_BASE_URL",
      "required: the service's http(s) base address (or use --sandbox)",
    );
  }
  if (config.apiKey === undefined && config.transport === "stdio") {
    throw new ConfigError(
      "GENERATION_API_KEY",
      "required on stdio: the service key, 'lgk_' + 64 lowercase hex (or use --sandbox)",
    );
  }
}

/**
 * A directory that does not exist is skipped by the file tools, so a typo would only show as
 * "outside the allowed directories" much later: say so at start, by position, and keep serving.
 */
function directoryWarnings(config: Config, source: { field: string } | undefined): string[] {
  if (source === undefined) return [];
  const problems: string[] = [];
  config.files.forEach((dir, i) => {
    let problem: string | undefined;
    try {
      if (!statSync(dir).isDirectory()) problem = "is not a directory";
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      problem = code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? "error"})`;
    }
    if (problem !== undefined) {
      problems.push(
        `${source.field}: entry ${i + 1} of ${config.files.length} ${problem}; tools will not read or save there`,
      );
    }
  });
  return problems;
}
