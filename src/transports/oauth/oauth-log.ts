/**
 * What the operator sees of `--auth oauth` on stderr: one line per registration, sign-in, key the
 * service refused, revocation (with its reason), CIMD failure (host and reason) and registration
 * refused for its rate. Lines name clients by ID and accounts by a short tag of the key's hash;
 * never a key, token, code or secret. What strangers can trigger at will is said at most once a
 * minute per source: CIMD failures and rate refusals once a minute per distinct line; registrations
 * and keys the service refused as their first line from a source, then, while more come from
 * it, one line a minute counting them (so a flood of 3,000 registrations is a few lines).
 */
import { LRUCache } from "lru-cache";

const PREFIX = "generation-mcp: oauth:";
const QUIET_MS = 60_000;

/** A value a client chose, made safe for one log line: no controls, at most `max` characters. */
export function loggable(text: string, max = 60): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: controls are what is removed
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ");
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** Where a redirect URI leads: its host, or an app's scheme and host (cursor://anysphere.cursor-mcp). */
function redirectPlace(uri: string): string {
  const url = URL.parse(uri);
  if (url === null) return "?";
  return url.protocol === "https:" || url.protocol === "http:" ? url.host : `${url.protocol}//${url.host}`;
}

/** The account a key hash names, shortened: enough to tell accounts apart in a log. */
export const accountTag = (keyHash: string): string => keyHash.slice(0, 12);

export interface OAuthLog {
  /** `source`: the client's address as rate-limit.ts counts it. */
  registered(clientId: string, name: string | undefined, redirects: readonly string[], source: string): void;
  signedIn(clientId: string, keyHash: string): void;
  keyRefused(clientId: string, code: string, source: string): void;
  revoked(what: string, reason: string): void;
  cimdFailed(clientIdUrl: string, reason: string): void;
  /** `what` (registration, authorization request) refused for `source`, over `limit`. */
  rateLimited(what: string, source: string, limit: string): void;
}

/** What a source did in its current minute, beyond the one line said. */
interface Quiet {
  more: number;
}

/**
 * Says a line for a source's first event of a kind, then holds the rest for QUIET_MS and says
 * how many there were, once a minute while they keep coming.
 */
function perSource(line: (text: string) => void) {
  const held = new LRUCache<string, Quiet>({ max: 1_000 });
  const close = (key: string, summary: (n: number) => string) => {
    const quiet = held.get(key);
    if (quiet === undefined) return;
    if (quiet.more === 0) {
      held.delete(key);
      return;
    }
    line(summary(quiet.more));
    quiet.more = 0;
    setTimeout(() => close(key, summary), QUIET_MS).unref();
  };
  return (key: string, first: string, summary: (n: number) => string) => {
    const quiet = held.get(key);
    if (quiet !== undefined) {
      quiet.more += 1;
      return;
    }
    held.set(key, { more: 0 });
    line(first);
    setTimeout(() => close(key, summary), QUIET_MS).unref();
  };
}

export function oauthLog(write: (line: string) => void): OAuthLog {
  const said = new LRUCache<string, true>({ max: 1_000, ttl: QUIET_MS });
  const line = (text: string) => write(`${PREFIX} ${text}\n`);
  const fromSource = perSource(line);
  const once = (text: string) => {
    if (said.has(text)) return;
    said.set(text, true);
    line(text);
  };
  return {
    registered(clientId, name, redirects, source) {
      const hosts = [...new Set(redirects.map(redirectPlace))];
      fromSource(
        `registered:${source}`,
        `client registered: ${clientId} "${loggable(name ?? "")}", returning to ${loggable(hosts.join(", "))}`,
        (n) => `${n} more client${n === 1 ? "" : "s"} registered from ${source} in the last minute`,
      );
    },
    signedIn(clientId, keyHash) {
      line(`sign-in: client ${loggable(clientId)} connected to account ${accountTag(keyHash)}`);
    },
    keyRefused(clientId, code, source) {
      fromSource(
        `key-refused:${source}`,
        `sign-in refused for client ${loggable(clientId)}: the service answered ${code.replace(/[^A-Z0-9_]/g, "")}`,
        (n) => `${n} more sign-in${n === 1 ? "" : "s"} refused from ${source} in the last minute`,
      );
    },
    revoked(what, reason) {
      line(`revoked: ${what}: ${reason}`);
    },
    cimdFailed(clientIdUrl, reason) {
      const host = URL.parse(clientIdUrl)?.host ?? "?";
      once(`client metadata document from ${loggable(host)} refused: ${loggable(reason, 200)}`);
    },
    rateLimited(what, source, limit) {
      once(
        `${what} refused for ${source}: ${limit}; if ${source} is your proxy, list it in GENERATION_TRUSTED_PROXIES`,
      );
    },
  };
}
