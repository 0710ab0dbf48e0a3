/**
 * The command line and environment, read once at startup into a plain Config.
 * Every malformed value is refused here, all of them at once, each with one line naming the
 * variable or flag and what is expected (never the value), so nothing half-configured ever talks
 * to the service and a user fixes every setting in one go.
 */
import { remoteUsers } from "./callers.js";
import type { Config } from "./config-types.js";
import { DEFAULT_HOST, DEFAULT_SANDBOX_PORT, SANDBOX_FLAGS, SETTINGS, type Setting } from "./settings.js";
import { directoryWarnings, ignoredSettingWarnings, outputDirWarnings } from "./start-warnings.js";
import { ConfigError, ConfigErrors, readHost, readPort } from "./values.js";

/**
 * node:util as CommonJS: its ESM facade reads every export, which loads worker_threads and more
 * behind util's lazy getters (about a millisecond of every start, before tools/list).
 */
const { parseArgs } = process.getBuiltinModule("node:util");

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
  const problems: ConfigError[] = [];
  const { values, positionals } = parseFlags(argv, problems);
  if (values.help === true) return { name: "help" };
  if (values.version === true) return { name: "version" };
  // After an unknown option, a word that follows may be its value: not a command of its own.
  const [sub, ...extra] = problems.length > 0 ? [] : positionals;
  if (sub !== undefined && sub !== "sandbox") {
    problems.push(
      new ConfigError("command", `unknown command ${shownWord(sub)} (expected no command, or 'sandbox')`),
    );
  }
  if (extra[0] !== undefined) {
    problems.push(new ConfigError("command", `unexpected argument ${shownWord(extra[0])} (see --help)`));
  }
  if (sub === "sandbox") {
    if (problems.length > 0) throw new ConfigErrors(problems);
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
  const config = buildConfig(values, env, problems);
  if (problems.length > 0) throw new ConfigErrors(problems);
  const warnings = [
    ...directoryWarnings(config, sourceOf(values, env, "files")),
    ...outputDirWarnings(config, sourceOf(values, env, "outputDir")),
    ...ignoredSettingWarnings(config, givenSettings(values, env)),
  ];
  return { name: "serve", config, warnings };
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
function parseFlags(
  argv: readonly string[],
  problems: ConfigError[],
): { values: Values; positionals: string[] } {
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
      problems.push(
        new ConfigError("command line", `unknown option ${shownFlag(token.rawName)} (see --help)`),
      );
      delete values[token.name];
    } else if (option.type === "string" && token.value === undefined) {
      problems.push(new ConfigError(`--${token.name}`, "needs a value (see --help)"));
      delete values[token.name];
    } else if (option.type === "boolean" && token.value !== undefined) {
      problems.push(new ConfigError(`--${token.name}`, "takes no value (see --help)"));
      values[token.name] = true; // meant as set: judge the rest as if it were
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

/** The settings given a value, by the field it came from (a flag or a variable). */
function givenSettings(values: Values, env: NodeJS.ProcessEnv): Array<{ key: keyof Config; field: string }> {
  return SETTINGS.flatMap((setting) => {
    const source = sourceOf(values, env, setting);
    return source === undefined ? [] : [{ key: setting.key, field: source.field }];
  });
}

/** Reads every setting; each malformed one adds its line to `problems` and the rest are still read. */
function buildConfig(values: Values, env: NodeJS.ProcessEnv, problems: ConfigError[]): Config {
  const config: Partial<Config> = {};
  const refused = new Set<keyof Config>();
  const sandbox = values.sandbox === true;
  for (const setting of SETTINGS) {
    // In sandbox mode the embedded service and its own key are used: the real ones are ignored, not checked.
    if (sandbox && setting.serviceOnly) continue;
    try {
      const value = settingValue(setting, sourceOf(values, env, setting), config);
      if (value !== undefined) (config as Record<string, unknown>)[setting.key] = value;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(error);
      refused.add(setting.key);
    }
  }
  config.remoteUsers = remoteUsers(config);
  if (!sandbox) problems.push(...missingService(config, refused, env));
  if (config.auth === "oauth" && !refused.has("auth")) problems.push(...missingOAuth(config, refused));
  return config as Config;
}

/**
 * OAuth needs the HTTP transport, the URL users reach, and the secret that encrypts their keys:
 * each one missing is its own line, all in the same run (one already refused as malformed is not
 * reported again as missing).
 */
function missingOAuth(config: Partial<Config>, refused: ReadonlySet<keyof Config>): ConfigError[] {
  const out: ConfigError[] = [];
  if (config.transport !== "http" && !refused.has("transport")) {
    out.push(new ConfigError("--auth", "'oauth' needs --transport http (stdio takes GENERATION_API_KEY)"));
  }
  if (config.publicUrl === undefined && !refused.has("publicUrl")) {
    out.push(
      new ConfigError(
        "GENERATION_PUBLIC_URL",
        "required with --auth oauth: the https URL users reach, such as https://mcp.example.com (http://127.0.0.1:3333 to try it on one machine)",
      ),
    );
  }
  if (config.authSecret === undefined && !refused.has("authSecret")) {
    out.push(
      new ConfigError(
        "GENERATION_AUTH_SECRET",
        "required with --auth oauth (or GENERATION_AUTH_SECRET_FILE): base64 of at least 32 random bytes, the same on every replica ('openssl rand -base64 32')",
      ),
    );
  }
  return out;
}

function settingValue(
  setting: Setting,
  source: { value: string | boolean; field: string } | undefined,
  config: Readonly<Partial<Config>>,
): Config[keyof Config] | undefined {
  if (source === undefined) return setting.fallback?.(config);
  if (typeof source.value === "boolean" || setting.read === undefined) return source.value;
  const { read } = setting;
  const raw = source.value;
  try {
    return read(raw, source.field);
  } catch (error) {
    // A pasted value often brings a space or a newline along; the reader's "expected …" alone
    // would not say so, and the value is never shown. Say it when trimming would make it valid.
    const trimmed = raw.trim();
    if (!(error instanceof ConfigError) || trimmed === raw || trimmed === "") throw error;
    try {
      read(trimmed, source.field);
    } catch {
      throw error;
    }
    throw new ConfigError(
      source.field,
      "starts or ends with whitespace (a space, tab or line break); remove it (value not shown)",
    );
  }
}

/** The service settings a server needs, unless already refused as malformed (one line each). */
function missingService(
  config: Partial<Config>,
  refused: ReadonlySet<keyof Config>,
  env: NodeJS.ProcessEnv,
): ConfigError[] {
  const out: ConfigError[] = [];
  if (config.baseUrl === undefined && !refused.has("baseUrl")) {
    out.push(
      new ConfigError(
        "GENERATION_BASE_URL",
        `required: the service's http(s) base address (or use --sandbox)${spacedName(env, "GENERATION_BASE_URL")}`,
      ),
    );
  }
  if (config.apiKey === undefined && !refused.has("apiKey") && config.transport === "stdio") {
    out.push(
      new ConfigError(
        "GENERATION_API_KEY",
        `required on stdio: the service key, 'lgk_' + 64 lowercase hex (or use --sandbox)${spacedName(env, "GENERATION_API_KEY")}`,
      ),
    );
  }
  return out;
}

/** A variable whose NAME carries whitespace (a host's JSON "GENERATION_API_KEY ") reads as unset. */
function spacedName(env: NodeJS.ProcessEnv, name: string): string {
  const near = Object.keys(env).some((k) => k !== name && k.trim() === name);
  return near
    ? `; a variable named ${name} with whitespace around the name is set: remove the whitespace`
    : "";
}
