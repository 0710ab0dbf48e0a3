/**
 * The settings of `--auth oauth` beyond the mode, URL and secret: how long a sign-in and its
 * tokens last, and which proxies may name the client's address (the rate limits on registrations,
 * authorization requests and sign-in posts).
 * docs/oauth.md explains the defaults: they suit hosts that never refresh (claude.ai), since the
 * grant and the user's key are checked on every request, so revocation does not wait for a
 * short token to expire.
 */
import type { BlockList } from "node:net";
import { ConfigError, type Reader } from "./values.js";

/**
 * node:net as CommonJS: its ESM facade reads every export, and BlockList's getter loads the
 * block-list module on every start; a list is made only for --auth oauth's trusted proxies.
 */
const { isIP } = process.getBuiltinModule("node:net");

/** A setting as settings.ts lists them (its `Setting`), for the fields below. */
interface OAuthSetting {
  readonly key: "accessTokenTtl" | "refreshTokenTtl" | "grantIdleTtl" | "refreshGrace" | "trustedProxies";
  readonly env: `GENERATION_${string}`;
  readonly read: Reader<number> | Reader<string[]>;
  readonly fallback?: () => number;
  readonly help: string;
  readonly doc: string;
  readonly defaultDoc: string;
}

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const DEFAULT_ACCESS_TOKEN_TTL_S = 30 * DAY;
export const DEFAULT_REFRESH_TOKEN_TTL_S = 90 * DAY;
export const DEFAULT_GRANT_IDLE_TTL_S = 90 * DAY;
export const DEFAULT_REFRESH_GRACE_S = 60;
/** The longest any lifetime may be set to. */
export const MAX_LIFETIME_S = 365 * DAY;
/** The longest grace: a retry comes within seconds, not minutes. */
export const MAX_REFRESH_GRACE_S = 10 * MINUTE;

const UNITS: Record<string, number> = { s: 1, m: MINUTE, h: HOUR, d: DAY };

/** A duration, `90` (seconds), `90s`, `15m`, `12h` or `30d`, from `min` to `max` seconds. */
function readDuration(min: number, max: number): Reader<number> {
  const expected = `expected a duration from ${shown(min)} to ${shown(max)}, such as 60s, 15m, 12h or 30d`;
  return (value, field) => {
    const match = /^(\d{1,9})([smhd]?)$/.exec(value);
    if (match === null) throw new ConfigError(field, `${expected} (value not shown)`);
    const seconds = Number(match[1]) * (UNITS[match[2] || "s"] ?? 1);
    if (seconds < min || seconds > max) throw new ConfigError(field, `${value} is out of range; ${expected}`);
    return seconds;
  };
}

/** A duration as the docs write it: the largest unit that divides it. */
export function shown(seconds: number): string {
  for (const [unit, size] of [
    ["d", DAY],
    ["h", HOUR],
    ["m", MINUTE],
  ] as const) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

/**
 * Addresses or CIDR ranges (IPv4 or IPv6), comma-separated: the proxies whose X-Forwarded-For
 * is believed. Each entry is checked here, so a typo stops the start instead of trusting nothing.
 */
export const readTrustedProxies: Reader<string[]> = (value, field) => {
  const entries = value
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "");
  if (entries.length === 0)
    throw new ConfigError(field, "expected addresses or CIDR ranges, comma-separated");
  entries.forEach((entry, i) => {
    if (proxyRange(entry) === undefined) {
      throw new ConfigError(
        field,
        `entry ${i + 1} of ${entries.length} is not an IP address or CIDR range (such as 10.0.0.0/8 or fd00::/8)`,
      );
    }
  });
  return entries;
};

/** One entry of GENERATION_TRUSTED_PROXIES as a network and prefix length, or undefined. */
export function proxyRange(
  entry: string,
): { net: string; prefix: number; family: "ipv4" | "ipv6" } | undefined {
  const [net = "", bits] = entry.split("/");
  const version = isIP(net);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return { net, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/** The trusted proxies as a BlockList (which also matches IPv4-mapped IPv6 addresses). */
export function trustedProxyList(entries: readonly string[]): BlockList {
  const list = new (process.getBuiltinModule("node:net").BlockList)();
  for (const entry of entries) {
    const range = proxyRange(entry);
    if (range !== undefined) list.addSubnet(range.net, range.prefix, range.family);
  }
  return list;
}

const ttl = (
  key: "accessTokenTtl" | "refreshTokenTtl" | "grantIdleTtl",
  env: `GENERATION_${string}`,
  fallback: number,
  doc: string,
): OAuthSetting => ({
  key,
  env,
  read: readDuration(MINUTE, MAX_LIFETIME_S),
  fallback: () => fallback,
  help: `with --auth oauth: ${doc} (default ${shown(fallback)})`,
  doc: `with \`oauth\`: ${doc}; \`60s\`, \`15m\`, \`12h\` or \`30d\`, from 1m to ${shown(MAX_LIFETIME_S)} (docs/oauth.md, "Lifetimes")`,
  defaultDoc: `\`${shown(fallback)}\``,
});

/** In reading order, after GENERATION_AUTH_SECRET_FILE (settings.ts). */
export const OAUTH_SETTINGS: readonly OAuthSetting[] = [
  ttl(
    "accessTokenTtl",
    "GENERATION_AUTH_ACCESS_TTL",
    DEFAULT_ACCESS_TOKEN_TTL_S,
    "how long an access token lasts; long by default, for hosts that never refresh",
  ),
  ttl(
    "refreshTokenTtl",
    "GENERATION_AUTH_REFRESH_TTL",
    DEFAULT_REFRESH_TOKEN_TTL_S,
    "how long a refresh token lasts (each use gives a new one)",
  ),
  ttl(
    "grantIdleTtl",
    "GENERATION_AUTH_IDLE_TTL",
    DEFAULT_GRANT_IDLE_TTL_S,
    "how long a sign-in unused by its host lasts before the user signs in again",
  ),
  {
    key: "refreshGrace",
    env: "GENERATION_AUTH_REFRESH_GRACE",
    read: readDuration(0, MAX_REFRESH_GRACE_S),
    fallback: () => DEFAULT_REFRESH_GRACE_S,
    help: `with --auth oauth: how long a refresh token just used may be used again (a raced or retried refresh) without ending the sign-in (default ${shown(DEFAULT_REFRESH_GRACE_S)}; 0 turns it off)`,
    doc: `with \`oauth\`: how long a refresh token just used may be presented again (a raced or retried refresh) without ending the sign-in; \`0\` to \`${shown(MAX_REFRESH_GRACE_S)}\``,
    defaultDoc: `\`${shown(DEFAULT_REFRESH_GRACE_S)}\``,
  },
  {
    key: "trustedProxies",
    env: "GENERATION_TRUSTED_PROXIES",
    read: readTrustedProxies,
    help: "over HTTP: comma-separated addresses or CIDR ranges of the proxies in front; their connections count only in the total, and with --auth oauth their X-Forwarded-For names the client (registrations, authorization requests, sign-in posts and metadata document fetches are rate-limited per client)",
    doc: "over HTTP: comma-separated addresses or CIDR ranges of your proxies (the TLS front); their connections count only in the total, and with `oauth` only from these is `X-Forwarded-For` believed, to count dynamic client registrations, authorization requests, sign-in posts and metadata document fetches per client address",
    defaultDoc: "none: the peer's own address",
  },
];
