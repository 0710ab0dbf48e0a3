/**
 * The one reader of a ledger store URI: which back end, where, and how durable. The command line
 * checks a URI with it at start and the ledger opens stores with it, so the two cannot disagree.
 * Messages name the scheme at most, never the URI: a database URI may carry a password.
 * This module stays light (node built-ins and env-paths): configuration loads it on every start.
 */
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import envPaths from "env-paths";
import { numberIn } from "./numbers.js";

/** The schemes a store URI may use: SQLite built in, PostgreSQL and Redis as shared stores. */
export const STORE_SCHEMES = ["sqlite", "postgres", "postgresql", "redis", "rediss"] as const;
export type StoreScheme = (typeof STORE_SCHEMES)[number];

/**
 * `strict` (the default): a store that cannot make a claim durable before the request is sent is
 * refused. `relaxed` (`?durability=relaxed`): the operator accepts that a crash of the store may
 * lose a claim, and with it the protection against a second charge.
 */
export type Durability = "strict" | "relaxed";

export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5_000;
export const MAX_SQLITE_BUSY_TIMEOUT_MS = 600_000;
/** A scheme longer than this is shown as "an unsupported scheme": it may be a pasted secret. */
const SHOWN_SCHEME_MAX = 16;

export type StoreLocation =
  | {
      kind: "sqlite";
      path: string;
      busyTimeoutMs: number;
      durability: Durability;
    }
  | {
      kind: "postgres" | "redis";
      scheme: StoreScheme;
      /** The URI for the driver: the ledger's own query parameter (`durability`) removed. */
      connection: string;
      durability: Durability;
    };

/**
 * A store URI that cannot be used; `message` is one line, without the URI. Not a LedgerError, whose
 * module loads node:crypto: configuration reads URIs on every start (openStore converts it).
 */
export class StoreUriError extends Error {
  override readonly name = "StoreUriError";
}

const refuse = (message: string): never => {
  throw new StoreUriError(message);
};

/** `sqlite://<user data dir>/ledger.sqlite`. */
export function defaultStoreUri(): string {
  return `sqlite://${join(envPaths("generation-mcp", { suffix: "" }).data, "ledger.sqlite")}`;
}

/** Reads a store URI, or throws a StoreUriError saying what is expected. */
export function parseStoreUri(uri: string): StoreLocation {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/s.exec(uri);
  if (match === null) {
    return refuse("expected a store URI: sqlite:///absolute/path/ledger.sqlite, postgres://… or redis://…");
  }
  const scheme = (match[1] ?? "").toLowerCase();
  if (!(STORE_SCHEMES as readonly string[]).includes(scheme)) {
    const named = scheme.length <= SHOWN_SCHEME_MAX ? `store ${scheme}://` : "store scheme";
    const expected = STORE_SCHEMES.map((s) => `${s}://`).join(", ");
    return refuse(`unsupported ${named}; expected one of ${expected}`);
  }
  if (scheme === "sqlite") return parseSqlite(match[2] ?? "");
  return parseNetworked(uri, scheme as StoreScheme);
}

function parseSqlite(rest: string): StoreLocation {
  const q = rest.indexOf("?");
  let path = q === -1 ? rest : rest.slice(0, q);
  const params = new URLSearchParams(q === -1 ? "" : rest.slice(q + 1));
  if (path === "" || path === ":memory:" || path.startsWith("file:")) {
    refuse("sqlite:// needs a file path (an in-memory ledger would not survive a restart)");
  }
  // `~/` is the home directory, as in a shell: a config file cannot expand it itself.
  if (path.startsWith("~/")) path = join(homedir(), path.slice(2));
  if (!isAbsolute(path)) {
    refuse(
      "expected an absolute SQLite path, as in sqlite:///absolute/path/ledger.sqlite (or sqlite://~/path under the home directory)",
    );
  }
  for (const name of params.keys()) {
    if (name !== "busyTimeoutMs" && name !== "durability" && name !== "driver") {
      refuse("sqlite:// takes only the query parameters busyTimeoutMs, durability and driver");
    }
  }
  // `driver=node` was one of two choices before Node 22.13 became the floor; it is still accepted,
  // so a URI written then opens unchanged. The sqlite3 driver is gone: say so rather than ignore it.
  if (params.getAll("driver").some((d) => d !== "node")) {
    refuse("driver: the only SQLite driver is node (Node's built-in node:sqlite); remove driver=sqlite3");
  }
  const raw = params.get("busyTimeoutMs");
  const busy = numberIn(raw ?? String(DEFAULT_SQLITE_BUSY_TIMEOUT_MS), {
    min: 0,
    max: MAX_SQLITE_BUSY_TIMEOUT_MS,
    integer: true,
    expected: `expected an integer from 0 to ${MAX_SQLITE_BUSY_TIMEOUT_MS}`,
  });
  if ("problem" in busy) return refuse(`busyTimeoutMs: ${busy.problem}`);
  return {
    kind: "sqlite",
    path: resolve(path),
    busyTimeoutMs: busy.value,
    durability: durabilityOf(params),
  };
}

function parseNetworked(uri: string, scheme: StoreScheme): StoreLocation {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    // The URL parser's own message quotes the input, password included.
    return refuse(`${scheme}:// URI is malformed (check the host, the port and any %-escapes)`);
  }
  const kind = scheme.startsWith("postgres") ? "postgres" : "redis";
  // libpq allows an empty host (a local socket named in the query); a Redis URI needs a host.
  if (kind === "redis" && url.hostname === "") refuse(`${scheme}:// needs a host`);
  const durability = durabilityOf(url.searchParams);
  // Re-serialise only when there is something to remove: the driver gets the URI as written.
  if (!url.searchParams.has("durability")) return { kind, scheme, connection: uri, durability };
  url.searchParams.delete("durability");
  return { kind, scheme, connection: url.href, durability };
}

function durabilityOf(params: URLSearchParams): Durability {
  const value = params.get("durability");
  if (value === null || value === "strict") return "strict";
  if (value === "relaxed") return "relaxed";
  return refuse("durability must be 'strict' or 'relaxed'");
}
