/**
 * GENERATION_ALLOWED_HOSTS: host names an HTTP server answers to besides its bind address's and
 * GENERATION_PUBLIC_URL's (callers.ts, publicHostnames). Every other `Host` stays refused by the
 * DNS-rebinding check (src/transports/http-guard.ts).
 */
import { ConfigError, type Reader } from "./values.js";

/** At most this many names: a front has a few, not a zone's worth. */
export const MAX_ALLOWED_HOSTS = 32;
/** A DNS name (labels of letters, digits and hyphens), an IPv4 address or a bracketed IPv6 one. */
const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Comma-separated host names, as `Host` headers carry them without the port: `mcp.example.com`,
 * `10.0.0.2`, `[fd00::2]`. No scheme, port, path or wildcard; an entry is named by position.
 */
export const readHostNames: Reader<string[]> = (value, field) => {
  const entries = value
    .split(",")
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v !== "");
  if (entries.length > MAX_ALLOWED_HOSTS) {
    throw new ConfigError(field, `${entries.length} names; at most ${MAX_ALLOWED_HOSTS}`);
  }
  return entries.map((entry, i) => {
    const bare = entry.replace(/^\[(.*)\]$/, "$1");
    if (bare.includes(":")) {
      // An IPv6 literal, written as Host headers carry it: in brackets.
      const url = URL.canParse(`http://[${bare}]/`) ? new URL(`http://[${bare}]/`) : undefined;
      if (url !== undefined) return url.hostname;
    } else if (HOST_NAME.test(entry)) {
      return entry;
    }
    throw new ConfigError(
      field,
      `entry ${i + 1} of ${entries.length}: expected a host name such as mcp.example.com (no scheme, port, path or wildcard)`,
    );
  });
};
