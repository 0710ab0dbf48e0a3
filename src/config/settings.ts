/**
 * Every setting, once: its variable, its flag, how its value is read, its default, and the text
 * that explains it. The command-line options, the variable-to-flag mapping, `--help` and the
 * README's tables are all made from this list. The Config it fills is in config-types.ts.
 */
import { homedir } from "node:os";
import { delimiter } from "node:path";
import { MAX_ALLOWED_HOSTS, readHostNames } from "./accepted-hosts.js";
import { MAX_WAIT_SECONDS } from "./bounds.js";
import { remoteUsers } from "./callers.js";
import type { Config } from "./config-types.js";
import { OAUTH_SETTINGS } from "./oauth-settings.js";
import { DEFAULT_SERVE_LIMITS, readServeLimits } from "./serve-limits.js";
import { LIMITS } from "./service-limits.js";
import { defaultStoreUri, MAX_SQLITE_BUSY_TIMEOUT_MS } from "./store-uri.js";
import {
  APPROVAL_TTL_MS,
  DEFAULT_BUDGET_CAP_MS,
  DEFAULT_WAIT_CAP_SECONDS,
  QUESTION_ANSWER_MS,
} from "./time-limits.js";
import {
  type Reader,
  readApiKey,
  readAuth,
  readAuthSecret,
  readAuthSecretFile,
  readBaseUrl,
  readDirectories,
  readDirectory,
  readGems,
  readHost,
  readModelId,
  readOrigins,
  readPort,
  readPublicUrl,
  readStore,
  readTransport,
  readWaitSeconds,
} from "./values.js";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 3333;
export const DEFAULT_SANDBOX_PORT = 3334;
export const DEFAULT_WAIT_SECONDS = 45;
/** Same value as the sandbox's SANDBOX_EXTRACTION_MODEL (a test pins them together); not imported, to keep the sandbox out of cold start. */
export const DEFAULT_EXTRACTION_MODEL = "service-video-extract";

export interface Setting<K extends keyof Config = keyof Config> {
  /** The Config field it fills. */
  readonly key: K;
  readonly env?: `GENERATION_${string}`;
  /** The long flag, without its dashes. */
  readonly flag?: string;
  /** How a flag's value is written in `--help`; a flag without one is a switch. */
  readonly placeholder?: string;
  readonly read?: Reader<Config[K]>;
  /** The value when the setting is not given, worked out from the settings read before it. */
  readonly fallback?: (config: Readonly<Partial<Config>>) => Config[K];
  /** Only for the real service: with --sandbox it is neither read nor checked. */
  readonly serviceOnly?: boolean;
  /** One line for `--help`, plain text. */
  readonly help: string;
  /** The README's "meaning" and "default" cells, Markdown. */
  readonly doc: string;
  readonly defaultDoc: string;
}

const define = <K extends keyof Config>(setting: Setting<K>): Setting<K> => setting;
/** 1,000,000,000: grouped by hand, since loading Intl for one number costs a cold start tens of ms. */
const gems = String(LIMITS.mediaMaxGems).replace(/\B(?=(\d{3})+$)/g, ",");

/** In reading order: a fallback may use only the settings above it. */
export const SETTINGS: readonly Setting[] = [
  define({
    key: "transport",
    flag: "transport",
    placeholder: "stdio|http",
    read: readTransport,
    fallback: () => "stdio" as const,
    help: "transport (default stdio); HTTP serves /mcp",
    doc: "transport; HTTP serves the path `/mcp`",
    defaultDoc: "`stdio`",
  }),
  define({
    key: "host",
    flag: "host",
    placeholder: "H",
    read: readHost,
    fallback: () => DEFAULT_HOST,
    help: `HTTP bind address (default ${DEFAULT_HOST})`,
    doc: "HTTP bind address",
    defaultDoc: `\`${DEFAULT_HOST}\``,
  }),
  define({
    key: "port",
    flag: "port",
    placeholder: "P",
    read: readPort,
    fallback: () => DEFAULT_PORT,
    help: `HTTP port (default ${DEFAULT_PORT}; 0 picks a free one and prints it)`,
    doc: "HTTP port; `0` picks a free one and prints it",
    defaultDoc: `\`${DEFAULT_PORT}\``,
  }),
  define({
    key: "auth",
    env: "GENERATION_AUTH",
    flag: "auth",
    placeholder: "key|oauth",
    read: readAuth,
    fallback: () => "key" as const,
    help: "how HTTP clients authenticate: key (Bearer lgk_…, default) or oauth (OAuth 2.1 sign-in, for claude.ai and ChatGPT connectors)",
    doc: "how HTTP clients authenticate: `key`, the service key as `Authorization: Bearer lgk_…`; `oauth`, OAuth 2.1 where each user signs in once with their own key (see Connect from claude.ai, Claude Desktop and ChatGPT, and docs/oauth.md)",
    defaultDoc: "`key`",
  }),
  define({
    key: "publicUrl",
    env: "GENERATION_PUBLIC_URL",
    flag: "public-url",
    placeholder: "URL",
    read: readPublicUrl,
    help: "the https URL users reach (http only on loopback): with --auth oauth the issuer and resource; in either mode its host is accepted in Host headers",
    doc: "the URL users reach, `https://host[:port]` (or its `/mcp` endpoint; plain `http` only on loopback, for testing): with `oauth` its origin is the OAuth issuer and `<origin>/mcp` the protected resource; in either mode its host is accepted in the `Host` header (a front with a public name, docs/deploying.md); where set, the media viewer names to Claude's hosts the sandbox origin they serve it from (`_meta.ui.domain`, from `<origin>/mcp`)",
    defaultDoc: "required with `oauth`",
  }),
  define({
    key: "allowedHosts",
    env: "GENERATION_ALLOWED_HOSTS",
    flag: "allowed-hosts",
    placeholder: "NAMES",
    read: readHostNames,
    help: "HTTP: host names (comma-separated) the Host header may carry besides the bind address's and GENERATION_PUBLIC_URL's (a front that forwards its public name)",
    doc: `HTTP, either mode: comma-separated host names (at most ${MAX_ALLOWED_HOSTS}, no port) that the \`Host\` header may carry besides the bind address's and \`GENERATION_PUBLIC_URL\`'s, for a front that forwards a public name; every other \`Host\` is refused (DNS-rebinding protection). The accepted names are said at start`,
    defaultDoc: "none",
  }),
  define({
    key: "authSecret",
    env: "GENERATION_AUTH_SECRET",
    read: readAuthSecret,
    help: "with --auth oauth: base64 of at least 32 random bytes, the same on every replica; encrypts stored service keys (comma-separated to rotate: new first)",
    doc: "with `oauth`: base64 of at least 32 random bytes (`openssl rand -base64 32`), the same on every replica; encrypts the service keys users sign in with (AES-256-GCM) and signs the sign-in cookies; several, comma-separated, rotate it: the first encrypts, all decrypt; in either mode, when set, the first also keys the seal on spending questions (2026-07-28 `requestState`), so an answer counts on every replica (without it each process has its own), and the MAC of spending approval tokens (without it, a secret kept in the ledger's store, shared by the processes on that store); no flag: secrets do not belong in process lists",
    defaultDoc: "required with `oauth` (or the file below)",
  }),
  define({
    key: "authSecret",
    env: "GENERATION_AUTH_SECRET_FILE",
    flag: "auth-secret-file",
    placeholder: "FILE",
    read: readAuthSecretFile,
    fallback: (config) => config.authSecret,
    help: "with --auth oauth: an absolute file holding GENERATION_AUTH_SECRET (one secret a line)",
    doc: "with `oauth`: an absolute path to a file holding the secret(s) of `GENERATION_AUTH_SECRET`, one a line (a mounted secret); used instead of it",
    defaultDoc: "unset",
  }),
  ...OAUTH_SETTINGS,
  define({
    key: "sandbox",
    flag: "sandbox",
    fallback: () => false,
    help: "use the embedded simulated service; no key needed",
    doc: "use the embedded simulated service instead of `GENERATION_BASE_URL`; no key needed",
    defaultDoc: "off",
  }),
  define({
    key: "baseUrl",
    env: "GENERATION_BASE_URL",
    flag: "base-url",
    placeholder: "URL",
    read: readBaseUrl,
    serviceOnly: true,
    help: "the service's base address, http(s)://… (required unless --sandbox)",
    doc: "the service's base address, `http(s)://…` without credentials, query or fragment",
    defaultDoc: "required unless `--sandbox`",
  }),
  define({
    key: "apiKey",
    env: "GENERATION_API_KEY",
    read: readApiKey,
    serviceOnly: true,
    help: "lgk_ + 64 lowercase hex (required on stdio unless --sandbox; on HTTP each session may bring its own Bearer key)",
    doc: "bearer key, `lgk_` + 64 lowercase hex; no flag: keys do not belong in process lists",
    defaultDoc: "required on stdio unless `--sandbox`; on HTTP each session may bring its own",
  }),
  define({
    key: "store",
    env: "GENERATION_STORE",
    flag: "store",
    placeholder: "URI",
    read: readStore,
    fallback: () => defaultStoreUri(),
    help: "the idempotency ledger: sqlite:///absolute/path (or sqlite://~/path), postgres://…, redis://… (default: SQLite in the user's data directory)",
    doc: `URI of the idempotency ledger: \`sqlite:///absolute/path\` (\`sqlite://~/path\` is under the home directory; \`?busyTimeoutMs=N\` up to ${MAX_SQLITE_BUSY_TIMEOUT_MS}), \`postgres://…\` (\`postgresql://\`) or \`redis://…\` (\`rediss://\`) through \`pg\` or \`@redis/client\`, installed beside this package (see docs/deploying.md); any other scheme is refused at start, naming the scheme but never the URI; the query parameter \`durability=strict|relaxed\` is the ledger's own and never reaches the driver`,
    defaultDoc:
      "`ledger.sqlite` in the user's data directory (`~/.local/share/generation-mcp` on Linux, `~/Library/Application Support/generation-mcp` on macOS, `%LOCALAPPDATA%\\generation-mcp\\Data` on Windows)",
  }),
  define({
    key: "files",
    env: "GENERATION_FILES",
    flag: "files",
    placeholder: "DIRS",
    read: readDirectories,
    // Remote users get none unless the operator names some: the server's home is not theirs.
    fallback: (config) => (remoteUsers(config) ? [] : [homedir()]),
    help: `directories tools may read and write, separated by '${delimiter}' (default: home; none for remote users)`,
    doc: "absolute directories, separated by the platform's path delimiter (`:`, or `;` on Windows), that tools may read uploads from and save outputs into; MCP roots from the client narrow this further when it gives at least one existing directory (an empty list keeps these); one that does not exist is reported at start and skipped. For remote users (`--auth oauth`, HTTP bound beyond loopback, or a public name accepted in `Host`) each key gets a private folder under each directory, and MCP roots are not used (see docs/security.md)",
    defaultDoc:
      "the user's home directory on stdio and loopback HTTP with `key` auth; none for remote users (their uploads by path and saves are refused)",
  }),
  define({
    key: "outputDir",
    env: "GENERATION_OUTPUT_DIR",
    flag: "output-dir",
    placeholder: "DIR",
    read: readDirectory,
    help: "where saved outputs go (default: generated/ under the first of GENERATION_FILES, or under the first MCP root)",
    doc: "absolute directory where saved outputs go, inside `GENERATION_FILES`; for remote users, the same place inside each user's own folder",
    defaultDoc:
      "`generated/` under the first of `GENERATION_FILES`, or under the client's first MCP root when its roots leave that out",
  }),
  define({
    key: "maxGems",
    env: "GENERATION_MAX_GEMS",
    flag: "max-gems",
    placeholder: "N",
    read: readGems,
    help: `the operator's cap per request (0 to ${LIMITS.mediaMaxGems}): nothing is sent with a higher maxGems; a call above it by the catalog's estimate is refused`,
    doc: `the operator's cap per request (integer, 0 to ${gems}): no submission is ever sent with a higher \`maxGems\`, whatever the call names or the user approves. A call naming no \`maxGems\` is sent with the cap; a larger \`maxGems\` is lowered to it (the result says so); a call whose estimate (from every cost factor the catalog publishes) is above it is refused locally (\`INVALID_ARGUMENT\`, naming the cap), nothing sent and nothing recorded`,
    defaultDoc: "unset",
  }),
  define({
    key: "confirmAboveGems",
    env: "GENERATION_CONFIRM_ABOVE_GEMS",
    flag: "confirm-above-gems",
    placeholder: "N",
    read: readGems,
    help: "ask the user before spending above this; where the client cannot ask, answer a quote with an approval token instead of sending",
    doc: `spending above this (integer, 0 to ${gems}) needs the user's yes first. Asked about: a submission whose own \`maxGems\`, else whose estimate (from every cost factor the catalog publishes: \`baseGems\`, \`outputCount\`, \`resolutionMultipliers\` and any other \`…Multipliers\`), exceeds it. Where the client can ask (elicitation), the question names the amount and its factors, and the amount accepted is sent as \`maxGems\`; on 2026-07-28 a yes counts only for the exact arguments and amount asked about. Where it cannot (no elicitation declared), or declares it and gives no answer within ${QUESTION_ANSWER_MS / 1000} s, nothing is sent: the call answers a quote with \`structuredContent.approval = {token, gems}\`, and the same call with \`approval: token\` added is sent with \`maxGems\` at most \`gems\` (the token is bound to the key, tool, arguments and amount, used once, valid ${APPROVAL_TTL_MS / 60_000} minutes on every replica sharing the store). A submission not asked about (no estimate and no \`maxGems\` of its own, as for video, audio, chat and extraction; or under this) is sent with this as \`maxGems\` unless a lower ceiling applies, so a higher quote is refused (\`PRICE_CHANGED\`), nothing charged, and the result says how to go above it`,
    defaultDoc: "unset",
  }),
  define({
    key: "extractionModel",
    env: "GENERATION_EXTRACTION_MODEL",
    flag: "extraction-model",
    placeholder: "ID",
    read: readModelId,
    fallback: () => DEFAULT_EXTRACTION_MODEL,
    help: `model for extract_video when the call names none (default ${DEFAULT_EXTRACTION_MODEL})`,
    doc: "model used by `extract_video` when the call names none",
    defaultDoc: `\`${DEFAULT_EXTRACTION_MODEL}\``,
  }),
  define({
    key: "defaultWaitSeconds",
    env: "GENERATION_WAIT_SECONDS",
    flag: "wait-seconds",
    placeholder: "S",
    read: readWaitSeconds,
    fallback: () => DEFAULT_WAIT_SECONDS,
    help: `default wait of generation tools, 0 to ${MAX_WAIT_SECONDS} seconds (default ${DEFAULT_WAIT_SECONDS})`,
    doc: `how long generation tools wait for a result by default (0 to ${MAX_WAIT_SECONDS} seconds); a call without a \`wait\` of its own answers within ${DEFAULT_BUDGET_CAP_MS / 1000} s, well inside the ~60 s hosts allow, so a larger value waits only until then, and no result suggests a \`wait\` above ${DEFAULT_WAIT_CAP_SECONDS} for \`poll_task\``,
    defaultDoc: `\`${DEFAULT_WAIT_SECONDS}\``,
  }),
  define({
    key: "mediaOrigins",
    env: "GENERATION_MEDIA_ORIGINS",
    read: readOrigins,
    help: "origins (comma-separated) of signed output URLs besides the base URL's, which the media viewer may load (a CDN)",
    doc: "comma-separated `http(s)://` origins that serve signed output URLs besides the base URL's (a CDN); the media viewer's content security policy lets it load media from them",
    defaultDoc: "the base URL's origin only",
  }),
  define({
    key: "serveLimits",
    env: "GENERATION_HTTP_LIMITS",
    read: readServeLimits,
    help: "limits as name=value pairs: the HTTP pools' totals and per-key shares, each key's daily ledger budget, e.g. sessions=8000,sessionsPerKey=50 (docs/security.md)",
    doc: `the HTTP server's shared pools' totals and per-key (per-address) shares, and each key's daily budget in the request ledger (any transport), as comma-separated \`name=value\` pairs, from ${Object.keys(
      DEFAULT_SERVE_LIMITS,
    )
      .map((n) => `\`${n}\``)
      .join(", ")} (docs/security.md, "Pools and fair shares")`,
    defaultDoc: "docs/security.md's table",
  }),
];

/** The settings the `sandbox` command takes (it serves no MCP: the rest would mean nothing). */
export const SANDBOX_FLAGS: ReadonlySet<string> = new Set(["host", "port"]);
