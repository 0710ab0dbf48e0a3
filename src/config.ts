/**
 * The command line and environment, read once at startup into a plain Config.
 * Every malformed value is refused here, with one line naming the variable or flag
 * and what is expected, so nothing half-configured ever talks to the service.
 * This module stays light (node built-ins and env-paths): it runs on every cold start.
 */
import { homedir } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";
import { parseArgs } from "node:util";
import envPaths from "env-paths";

export interface Config {
  transport: "stdio" | "http";
  host: string;
  port: number;
  sandbox: boolean;
  baseUrl?: string;
  apiKey?: string;
  store: string;
  files: string[];
  outputDir: string;
  maxGems?: number;
  extractionModel: string;
  defaultWaitSeconds: number;
  confirmAboveGems?: number;
  /** Origins besides the base URL's that serve signed output URLs (a CDN), for the viewer's CSP. */
  mediaOrigins?: string[];
}

/** What the command line asks for: serve MCP, run only the sandbox, or print help/version. */
export type Command =
  | { name: "serve"; config: Config }
  | { name: "sandbox"; host: string; port: number }
  | { name: "help" }
  | { name: "version" };

/** A configuration the server refuses to start with; `message` is one line, safe to print. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 3333;
export const DEFAULT_SANDBOX_PORT = 3334;
export const DEFAULT_WAIT_SECONDS = 45;
export const MAX_WAIT_SECONDS = 600;
export const MAX_GEMS = 1_000_000_000;
/** Same value as the sandbox's SANDBOX_EXTRACTION_MODEL (a test pins them together); not imported, to keep the sandbox out of cold start. */
export const DEFAULT_EXTRACTION_MODEL = "service-video-extract";
const API_KEY_PATTERN = /^lgk_[0-9a-f]{64}$/;
const URI_PATTERN = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;

const OPTIONS = {
  transport: { type: "string" },
  host: { type: "string" },
  port: { type: "string" },
  sandbox: { type: "boolean" },
  "base-url": { type: "string" },
  store: { type: "string" },
  files: { type: "string" },
  "output-dir": { type: "string" },
  "max-gems": { type: "string" },
  "extraction-model": { type: "string" },
  "confirm-above-gems": { type: "string" },
  "wait-seconds": { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

/** The flag for each variable that has one: a flag of the same meaning overrides the variable. */
const FLAG_OF_ENV = {
  GENERATION_BASE_URL: "base-url",
  GENERATION_STORE: "store",
  GENERATION_FILES: "files",
  GENERATION_OUTPUT_DIR: "output-dir",
  GENERATION_MAX_GEMS: "max-gems",
  GENERATION_EXTRACTION_MODEL: "extraction-model",
  GENERATION_CONFIRM_ABOVE_GEMS: "confirm-above-gems",
  GENERATION_WAIT_SECONDS: "wait-seconds",
} as const;
type Settable = keyof typeof FLAG_OF_ENV;

export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  const parsed = parseFlags(argv);
  const { values, positionals } = parsed;
  if (values.help) return { name: "help" };
  if (values.version) return { name: "version" };
  const [sub, ...extra] = positionals;
  if (sub !== undefined && sub !== "sandbox") {
    throw new ConfigError("command", `unknown command '${sub}' (expected no command, or 'sandbox')`);
  }
  if (extra.length > 0) throw new ConfigError("command", `unexpected argument '${extra[0]}'`);
  if (sub === "sandbox") {
    const serveOnly = Object.keys(values).filter((k) => k !== "port" && k !== "host");
    if (serveOnly.length > 0) {
      throw new ConfigError(
        `--${serveOnly[0]}`,
        "not accepted by 'sandbox' (it takes only --host and --port)",
      );
    }
    return {
      name: "sandbox",
      host: parseHost(values.host),
      port: values.port === undefined ? DEFAULT_SANDBOX_PORT : parsePort(values.port),
    };
  }
  return { name: "serve", config: buildConfig(values, env) };
}

/** The serving configuration; the agreed entry point for everything but the CLI's own commands. */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config {
  const command = parseCommand(argv, env);
  if (command.name !== "serve") throw new ConfigError("command", `'${command.name}' does not serve MCP`);
  return command.config;
}

type Values = ReturnType<typeof parseFlags>["values"];

function parseFlags(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
  } catch (error) {
    // node's messages are one line but mention internals; keep the flag and say what to do.
    const text = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new ConfigError("command line", `${text} (see --help)`);
  }
}

function buildConfig(values: Values, env: NodeJS.ProcessEnv): Config {
  // A flag beats its variable; an empty variable counts as unset (hosts often template them in).
  const setting = (name: Settable): { value: string; field: string } | undefined => {
    const flag = FLAG_OF_ENV[name];
    const fromFlag = values[flag];
    if (fromFlag !== undefined) return { value: fromFlag, field: `--${flag}` };
    const fromEnv = env[name];
    return fromEnv === undefined || fromEnv === "" ? undefined : { value: fromEnv, field: name };
  };

  const transport = values.transport ?? "stdio";
  if (transport !== "stdio" && transport !== "http") {
    throw new ConfigError("--transport", `expected 'stdio' or 'http', got '${transport}'`);
  }
  const sandbox = values.sandbox === true;
  const config: Config = {
    transport,
    host: parseHost(values.host),
    port: values.port === undefined ? DEFAULT_PORT : parsePort(values.port),
    sandbox,
    store: "",
    files: [],
    outputDir: "",
    extractionModel: DEFAULT_EXTRACTION_MODEL,
    defaultWaitSeconds: DEFAULT_WAIT_SECONDS,
  };

  // In sandbox mode the embedded service and its own key are used: the real ones are ignored, not checked.
  if (!sandbox) {
    const base = setting("GENERATION_BASE_URL");
    if (base === undefined) {
      throw new ConfigError(
        "GENERATION_BASE_URL",
        "required: the service's http(s) base address (or use --sandbox)",
      );
    }
    config.baseUrl = parseBaseUrl(base.value, base.field);
    const key = env.GENERATION_API_KEY;
    if (key !== undefined && key !== "") {
      // Never echo the value: a typo'd key is still mostly a secret.
      if (!API_KEY_PATTERN.test(key)) {
        throw new ConfigError(
          "GENERATION_API_KEY",
          "expected 'lgk_' followed by 64 lowercase hex characters (value not shown)",
        );
      }
      config.apiKey = key;
    } else if (transport === "stdio") {
      throw new ConfigError(
        "GENERATION_API_KEY",
        "required on stdio: the service key, 'lgk_' + 64 lowercase hex (or use --sandbox)",
      );
    }
  }

  const store = setting("GENERATION_STORE");
  if (store !== undefined) checkStore(store.value, store.field);
  config.store =
    store?.value ?? `sqlite://${join(envPaths("generation-mcp", { suffix: "" }).data, "ledger.sqlite")}`;

  const files = setting("GENERATION_FILES");
  config.files = files === undefined ? [homedir()] : parseDirectories(files.value, files.field);
  const firstFiles = config.files[0] ?? homedir();
  const output = setting("GENERATION_OUTPUT_DIR");
  if (output !== undefined && !isAbsolute(output.value)) {
    throw new ConfigError(output.field, `expected an absolute directory, got relative '${output.value}'`);
  }
  config.outputDir = output?.value ?? join(firstFiles, "generated");

  const maxGems = setting("GENERATION_MAX_GEMS");
  if (maxGems !== undefined) config.maxGems = parseInteger(maxGems.value, maxGems.field, 0, MAX_GEMS);
  const confirm = setting("GENERATION_CONFIRM_ABOVE_GEMS");
  if (confirm !== undefined)
    config.confirmAboveGems = parseInteger(confirm.value, confirm.field, 0, MAX_GEMS);

  const model = setting("GENERATION_EXTRACTION_MODEL");
  if (model !== undefined) {
    if (model.value.length > 150 || /\s/.test(model.value)) {
      throw new ConfigError(model.field, "expected a model ID of 1 to 150 characters without spaces");
    }
    config.extractionModel = model.value;
  }
  const media = env.GENERATION_MEDIA_ORIGINS;
  if (media !== undefined && media !== "")
    config.mediaOrigins = parseOrigins(media, "GENERATION_MEDIA_ORIGINS");

  const wait = setting("GENERATION_WAIT_SECONDS");
  if (wait !== undefined) {
    if (!/^\d+(\.\d+)?$/.test(wait.value) || Number(wait.value) > MAX_WAIT_SECONDS) {
      throw new ConfigError(
        wait.field,
        `expected seconds from 0 to ${MAX_WAIT_SECONDS}, got '${wait.value}'`,
      );
    }
    config.defaultWaitSeconds = Number(wait.value);
  }
  return config;
}

/** The ledger's back ends (see src/ledger): sqlite built in, the others through their keyv adapter. */
const STORE_SCHEMES = [
  "sqlite",
  "redis",
  "rediss",
  "valkey",
  "mongodb",
  "mongodb+srv",
  "postgres",
  "postgresql",
  "mysql",
  "etcd",
];

function checkStore(value: string, field: string): void {
  // Never echo the URI: a database URI may carry a password.
  if (!URI_PATTERN.test(value)) {
    throw new ConfigError(field, "expected a keyv URI such as sqlite:///absolute/path/ledger.sqlite");
  }
  const scheme = value.slice(0, value.indexOf(":")).toLowerCase();
  if (!STORE_SCHEMES.includes(scheme)) {
    throw new ConfigError(
      field,
      `unsupported scheme '${scheme}'; expected one of ${STORE_SCHEMES.join(", ")}`,
    );
  }
  if (scheme === "sqlite" && !isAbsolute(value.slice("sqlite://".length))) {
    throw new ConfigError(
      field,
      "expected an absolute SQLite path, as in sqlite:///absolute/path/ledger.sqlite",
    );
  }
}

function parseHost(host: string | undefined): string {
  if (host === undefined) return DEFAULT_HOST;
  if (!/^(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:.]+|[A-Za-z0-9.-]+)$/.test(host)) {
    throw new ConfigError("--host", `expected a host name or IP address, got '${host}'`);
  }
  // Accept [::1] as people write it in URLs; node's listen wants it bare.
  return host.startsWith("[") ? host.slice(1, -1) : host;
}

function parsePort(port: string): number {
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65_535) {
    throw new ConfigError(
      "--port",
      `expected an integer from 0 to 65535 (0 picks a free port), got '${port}'`,
    );
  }
  return Number(port);
}

function parseBaseUrl(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(field, `expected an http(s) URL, got '${value}'`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(field, `expected an http(s) URL, got scheme '${url.protocol.slice(0, -1)}'`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new ConfigError(field, "must not carry credentials; the key goes in GENERATION_API_KEY");
  }
  if (url.search !== "" || url.hash !== "") {
    throw new ConfigError(field, "expected a base address without query or fragment");
  }
  return url.href.replace(/\/+$/, "");
}

function parseOrigins(value: string, field: string): string[] {
  return value
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "")
    .map((v) => {
      const url = URL.canParse(v) ? new URL(v) : undefined;
      if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.href !== `${url.origin}/`) {
        throw new ConfigError(
          field,
          `expected comma-separated http(s) origins such as https://cdn.example.com, got '${v}'`,
        );
      }
      return url.origin;
    });
}

function parseDirectories(value: string, field: string): string[] {
  const dirs = value.split(delimiter).filter((d) => d !== "");
  if (dirs.length === 0)
    throw new ConfigError(field, `expected one or more directories separated by '${delimiter}'`);
  for (const dir of dirs) {
    if (!isAbsolute(dir)) {
      throw new ConfigError(
        field,
        `expected absolute directories separated by '${delimiter}', got relative '${dir}'`,
      );
    }
  }
  return dirs;
}

function parseInteger(value: string, field: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(field, `expected an integer from ${min} to ${max}, got '${value}'`);
  }
  return Number(value);
}

export const USAGE = `generation-mcp: MCP server for a paid media-generation service

Usage:
  generation-mcp [options]              MCP server (stdio by default)
  generation-mcp sandbox [--port P]     run only the simulated service over HTTP (default port ${DEFAULT_SANDBOX_PORT})

Options:
  --transport stdio|http   transport (default stdio); HTTP serves /mcp
  --host H                 HTTP bind address (default ${DEFAULT_HOST})
  --port P                 HTTP port (default ${DEFAULT_PORT}; 0 picks a free one and prints it)
  --sandbox                use the embedded simulated service; no key needed
  --base-url URL           overrides GENERATION_BASE_URL
  --store URI              overrides GENERATION_STORE
  --files DIRS             overrides GENERATION_FILES
  --output-dir DIR         overrides GENERATION_OUTPUT_DIR
  --max-gems N             overrides GENERATION_MAX_GEMS
  --confirm-above-gems N   overrides GENERATION_CONFIRM_ABOVE_GEMS
  --extraction-model ID    overrides GENERATION_EXTRACTION_MODEL
  --wait-seconds S         overrides GENERATION_WAIT_SECONDS
  -h, --help               this help
  -v, --version            the version

Environment:
  GENERATION_BASE_URL            the service's base address (required unless --sandbox)
  GENERATION_API_KEY             lgk_ + 64 lowercase hex (required on stdio unless --sandbox;
                                 on HTTP each session may bring its own Bearer key)
  GENERATION_STORE               keyv URI of the idempotency ledger (default: SQLite in the user's data dir)
  GENERATION_FILES               directories tools may read and write, separated by '${delimiter}' (default: home)
  GENERATION_OUTPUT_DIR          where saved outputs go (default: generated/ under the first GENERATION_FILES)
  GENERATION_MAX_GEMS            maxGems sent with every submission that names none (0..${MAX_GEMS})
  GENERATION_CONFIRM_ABOVE_GEMS  ask the user (elicitation) before spending more than this
  GENERATION_EXTRACTION_MODEL    model for extract_video (default ${DEFAULT_EXTRACTION_MODEL})
  GENERATION_WAIT_SECONDS        default wait of generation tools, 0..${MAX_WAIT_SECONDS} (default ${DEFAULT_WAIT_SECONDS})
  GENERATION_MEDIA_ORIGINS       origins (comma-separated) of signed output URLs besides the base URL's,
                                 which the media viewer may load from (a CDN)
`;
