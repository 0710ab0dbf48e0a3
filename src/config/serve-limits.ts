/**
 * The HTTP server's shared pools, each with a total and a share per key (per address for
 * connections, which exist before any credential), and each key's daily budget in the request
 * ledger (src/ledger/day-budget.ts): GENERATION_HTTP_LIMITS changes any of them as
 * `name=value` pairs, e.g. `sessions=8000,sessionsPerKey=50`. docs/security.md ("Pools and fair
 * shares") gives each one's worst case.
 */
import type { Reader } from "./values.js";

export interface ServeLimits {
  /** 2025-era sessions open at once, and per key. */
  sessions: number;
  sessionsPerKey: number;
  /** Seconds a session that made a successful call stays open without progress. */
  sessionIdleS: number;
  /** 2026-07-28 `subscriptions/listen` streams open at once, and per key. */
  listens: number;
  listensPerKey: number;
  /** Seconds a listen stream stays open without delivering a notification. */
  listenIdleS: number;
  /** MCP tasks this process drives at once for one key, and over all keys. */
  tasks: number;
  tasksPerKey: number;
  /** TCP connections open at once, and per client address (a trusted proxy's count only in the total). */
  connections: number;
  connectionsPerAddress: number;
  /** MiB of request bodies held at once (read and in use by their request), and per key. */
  bodyMiB: number;
  bodyMiBPerKey: number;
  /** Seconds a connection may take to send its request's headers, and its whole request. */
  headersTimeoutS: number;
  requestTimeoutS: number;
  /** Seconds an idle kept-alive connection stays open between requests. */
  keepAliveTimeoutS: number;
  /** Seconds a connection refused past `connections` or its address's share is held before it is closed. */
  refusedHoldS: number;
  /**
   * Requests, and MiB of request bodies, one key may send a minute, and an address whose requests
   * no credential admits: admission by CPU share (src/transports/http-admission.ts).
   */
  requestsPerKeyMinute: number;
  bodyMiBPerKeyMinute: number;
  requestsPerAddressMinute: number;
  bodyMiBPerAddressMinute: number;
  /**
   * Requests no credential admits, over all addresses, admitted a second and at once (a quarter of
   * the second kept for sign-ins under way): src/transports/http-anonymous.ts.
   */
  anonymousPerSecond: number;
  anonymousInFlight: number;
  /**
   * `--auth oauth`: authorization requests, and sign-in posts, the whole deployment takes a minute,
   * and its reserve for bursts (a team signing in at once) per 30 minutes, spent once a minute's
   * figure is (src/transports/oauth/rate-limit.ts).
   */
  signInsPerMinute: number;
  signInReserve: number;
  /** New request-ledger records, and MiB of their bodies, one key may store per UTC day (any transport). */
  ledgerRecordsPerKeyDay: number;
  ledgerMiBPerKeyDay: number;
}

/**
 * Sessions: about 50 KiB each while idle (npm run bench, part h), so some 200 MiB at the cap.
 * Bodies: 256 MiB of raw bytes (a parsed 48 MiB base64 body costs about as much again while used).
 * Rates: a viewer upload of the largest file (a 50 MiB voice) is about 68 MiB of JSON in 512 KiB
 * chunks (a 30 MiB asset 41 MiB), and one upload_asset body at most 48 MiB: 512 MiB a minute passes
 * a dozen such at any speed, while bounding what one key's bodies cost to read and parse (about 4
 * ms of CPU a MiB, measured).
 * Strangers' share: a sign-in is about ten requests no credential admits, so 40 a second (30 for
 * new ones) starts some three sign-ins a second, about the authorization limit per deployment
 * (oauth/rate-limit.ts), while bounding the event loop's time a flood from any number of addresses
 * takes; 32 at once bounds the store work they wait on.
 * Connections: well under the descriptors a process usually gets (`ulimit -n`, often 1,024 to
 * 65,536); a listen stream or a body in flight holds one, so the address share bounds those too.
 */
export const DEFAULT_SERVE_LIMITS: Readonly<ServeLimits> = {
  sessions: 4_000,
  sessionsPerKey: 100,
  sessionIdleS: 3_600,
  listens: 1_024,
  listensPerKey: 32,
  listenIdleS: 600,
  tasks: 2_000,
  tasksPerKey: 50,
  connections: 8_000,
  connectionsPerAddress: 256,
  bodyMiB: 256,
  bodyMiBPerKey: 96,
  headersTimeoutS: 20,
  requestTimeoutS: 300,
  keepAliveTimeoutS: 5,
  refusedHoldS: 10,
  requestsPerKeyMinute: 600,
  bodyMiBPerKeyMinute: 512,
  requestsPerAddressMinute: 600,
  bodyMiBPerAddressMinute: 16,
  anonymousPerSecond: 40,
  anonymousInFlight: 32,
  signInsPerMinute: 200,
  signInReserve: 2_000,
  ledgerRecordsPerKeyDay: 20_000,
  ledgerMiBPerKeyDay: 2_048,
};

const MAX_BODY_MIB = 48;
const NAMES = Object.keys(DEFAULT_SERVE_LIMITS) as Array<keyof ServeLimits>;
const MAX_VALUE = 1_000_000;

/** `name=value,…` over the names above: positive integers; a share above its total is refused. */
export const readServeLimits: Reader<Partial<ServeLimits>> = (value, field) => {
  const out: Partial<ServeLimits> = {};
  for (const part of value.split(",")) {
    const pair = part.trim();
    if (pair === "") continue;
    const [name = "", raw = ""] = pair.split("=", 2).map((s) => s.trim());
    if (!(NAMES as string[]).includes(name))
      throw new Error(`${field}: unknown limit '${name.slice(0, 40)}'; expected one of ${NAMES.join(", ")}`);
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < 1 || n > MAX_VALUE)
      throw new Error(`${field}: ${name} must be an integer from 1 to ${MAX_VALUE}`);
    out[name as keyof ServeLimits] = n;
  }
  const all = serveLimits(out);
  // One body of the largest size the transport reads (MAX_BODY_BYTES, src/transports/http-guard.ts).
  if (all.bodyMiBPerKeyMinute < MAX_BODY_MIB)
    throw new Error(
      `${field}: bodyMiBPerKeyMinute must be at least ${MAX_BODY_MIB}, the largest request body`,
    );
  for (const [share, total] of SHARES) {
    if (all[share] > all[total])
      throw new Error(`${field}: ${share} (${all[share]}) exceeds ${total} (${all[total]})`);
  }
  return out;
};

const SHARES: Array<[keyof ServeLimits, keyof ServeLimits]> = [
  ["sessionsPerKey", "sessions"],
  ["listensPerKey", "listens"],
  ["tasksPerKey", "tasks"],
  ["connectionsPerAddress", "connections"],
  ["bodyMiBPerKey", "bodyMiB"],
];

/** The limits in force: the defaults with what was set. */
export const serveLimits = (set: Partial<ServeLimits> | undefined): ServeLimits => ({
  ...DEFAULT_SERVE_LIMITS,
  ...set,
});
