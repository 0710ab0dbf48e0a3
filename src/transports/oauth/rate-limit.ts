/**
 * What anyone may ask of the authorization server without signing in, and what the store keeps of
 * it, is rate-limited: per client address (an IPv6 client by its /64, as one host usually holds a
 * whole /64) and per replica in all, each a token bucket.
 * - Dynamic client registration (RFC 7591): with the registrations no sign-in uses expiring after
 *   a day (oauth-adapter.ts), the store holds at most a day's worth of the replica-wide rate.
 * - An authorization request (`/oauth/authorize`, `/oauth/par`), which stores an interaction (or a
 *   pushed request) for the sign-in page: kept at most 30 minutes (oauth-provider.ts), so the
 *   store holds at most the replica's burst and half an hour of its rate.
 * - The sign-in form posted (`/oauth/sign-in/<uid>`): each post with a well-formed key has the
 *   service check it, for anyone who opened the page, so the server relays no flood of key
 *   checks to the service (nothing is stored for a refused one).
 *
 * The client's address is the peer's, unless the peer is a proxy the operator listed in
 * GENERATION_TRUSTED_PROXIES: then X-Forwarded-For is read from the right, past every trusted
 * hop, and the first address not trusted is the client (the left part of the header is whatever
 * the client wrote, so it is never believed).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type BlockList, isIP } from "node:net";
import { LRUCache } from "lru-cache";
import type { OAuthLog } from "./oauth-log.js";

interface Rate {
  burst: number;
  perMinute: number;
}
export interface Rates {
  perSource: Rate;
  perReplica: Rate;
}
export const REGISTRATIONS: Rates = {
  perSource: { burst: 20, perMinute: 20 },
  perReplica: { burst: 120, perMinute: 120 },
};
/**
 * A sign-in is one or two authorization requests; an office behind one address may hold many
 * users, and many users may sign in at once (a host rolled out to a team), so the replica's bucket
 * holds a large burst. Its interactions kept 30 minutes, the store holds at most 2,000 + 30 x 200 =
 * 8,000 of them per replica.
 */
export const AUTHORIZATIONS: Rates = {
  perSource: { burst: 60, perMinute: 60 },
  perReplica: { burst: 2_000, perMinute: 200 },
};
/** A user mistypes a key a few times; many users may sign in at once. */
export const SIGN_INS: Rates = {
  perSource: { burst: 30, perMinute: 30 },
  perReplica: { burst: 2_000, perMinute: 200 },
};
/** Sources remembered at once; the replica-wide bucket still bounds what forgetting one allows. */
const MAX_SOURCES = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** Takes a token from a bucket refilled continuously; the seconds until one is back when empty. */
function take(bucket: Bucket, rate: Rate, now: number): number {
  const perMs = rate.perMinute / 60_000;
  bucket.tokens = Math.min(rate.burst, bucket.tokens + Math.max(0, now - bucket.at) * perMs);
  bucket.at = now;
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return 0;
  }
  return Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
}

const unmapped = (address: string): string => /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;

/** The client's address: the peer's, or X-Forwarded-For's first untrusted hop from the right. */
export function clientAddress(req: IncomingMessage, trusted: BlockList | undefined): string {
  let address = unmapped(req.socket.remoteAddress ?? "");
  if (trusted === undefined) return address;
  const header = req.headers["x-forwarded-for"];
  const hops = (Array.isArray(header) ? header.join(",") : (header ?? ""))
    .split(",")
    .map((h) => unmapped(h.trim()))
    .filter((h) => h !== "");
  while (isIP(address) !== 0 && trusted.check(address, isIP(address) === 6 ? "ipv6" : "ipv4")) {
    const next = hops.pop();
    if (next === undefined || isIP(next) === 0) break;
    address = next;
  }
  return address;
}

/** What a source is counted by: an IPv4 address, or an IPv6 address's /64. */
export function sourceOf(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = "", tail = ""] = address.toLowerCase().split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === "" ? [] : tail.split(":");
  const groups = address.includes("::")
    ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

export type Admission = { ok: true } | { ok: false; source: string; retryAfterS: number; limit: string };

export class RateLimit {
  readonly #sources = new LRUCache<string, Bucket>({ max: MAX_SOURCES });
  readonly #replica: Bucket;

  constructor(
    private readonly trusted: BlockList | undefined,
    private readonly rates: Rates,
  ) {
    this.#replica = { tokens: rates.perReplica.burst, at: Date.now() };
  }

  /** Counts one request; refuses it when its source, or the replica, is over its rate. */
  admit(req: IncomingMessage, now = Date.now()): Admission {
    const source = sourceOf(clientAddress(req, this.trusted));
    let bucket = this.#sources.get(source);
    if (bucket === undefined) {
      bucket = { tokens: this.rates.perSource.burst, at: now };
      this.#sources.set(source, bucket);
    }
    const steps = [
      [bucket, this.rates.perSource, "from one address"],
      [this.#replica, this.rates.perReplica, "on this server"],
    ] as const;
    for (const [b, rate, where] of steps) {
      const wait = take(b, rate, now);
      if (wait > 0)
        return { ok: false, source, retryAfterS: wait, limit: `at most ${rate.perMinute} a minute ${where}` };
    }
    return { ok: true };
  }
}

/** What a refusal names, and what it suggests instead. */
interface Limited {
  name: string;
  plural: string;
  instead: string;
}
const REGISTRATION: Limited = {
  name: "registration",
  plural: "client registrations",
  instead: ", or register by Client ID Metadata Document",
};
const AUTHORIZATION: Limited = {
  name: "authorization request",
  plural: "authorization requests",
  instead: "",
};
const SIGN_IN: Limited = { name: "sign-in", plural: "sign-in attempts", instead: "" };

/** Counts a request against its source's rate; answers 429 (RFC 6585) when it is over. */
function admitted(
  req: IncomingMessage,
  res: ServerResponse,
  limit: RateLimit,
  log: OAuthLog,
  what: Limited,
): boolean {
  const admission = limit.admit(req);
  if (admission.ok) return true;
  log.rateLimited(what.name, admission.source, admission.limit);
  res
    .writeHead(429, {
      "content-type": "application/json",
      "cache-control": "no-store",
      "retry-after": String(admission.retryAfterS),
    })
    .end(
      JSON.stringify({
        error: "too_many_requests",
        error_description: `Too many ${what.plural}: ${admission.limit}. Retry after ${admission.retryAfterS} s${what.instead}.`,
      }),
    );
  return false;
}

/**
 * The gate's check of one request to the authorization server: a registration, an authorization
 * request (GET or POST /oauth/authorize, POST /oauth/par) or a sign-in form posted, counted
 * against its rate; false when it was refused (the 429 is written). Anything else passes.
 */
export function oauthLimits(
  trusted: BlockList | undefined,
  log: OAuthLog,
): (req: IncomingMessage, res: ServerResponse, path: string) => boolean {
  const registrations = new RateLimit(trusted, REGISTRATIONS);
  const authorizations = new RateLimit(trusted, AUTHORIZATIONS);
  const signIns = new RateLimit(trusted, SIGN_INS);
  return (req, res, path) => {
    if (path === "/oauth/register" && req.method === "POST") {
      return admitted(req, res, registrations, log, REGISTRATION);
    }
    const authorize = path === "/oauth/authorize" && (req.method === "GET" || req.method === "POST");
    if (authorize || (path === "/oauth/par" && req.method === "POST")) {
      return admitted(req, res, authorizations, log, AUTHORIZATION);
    }
    // The form's own path, not its /continue step (which checks no key).
    if (req.method === "POST" && /^\/oauth\/sign-in\/[^/]+$/.test(path)) {
      return admitted(req, res, signIns, log, SIGN_IN);
    }
    return true;
  };
}
