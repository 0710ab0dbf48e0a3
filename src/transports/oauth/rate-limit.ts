/**
 * What anyone may ask of the authorization server without signing in, and what the store keeps of
 * it, is rate-limited: per client address (an IPv6 client by its /64, as one host usually holds a
 * whole /64) and per deployment in all, each counted in the ledger's store (store-limiter.ts), so
 * N replicas on one store admit what one admits. Windows are fixed minutes (a client may get up to
 * twice a figure across a window's edge); a deployment's authorization requests and sign-ins also
 * have a reserve for bursts, spent only once the minute's figure is.
 * - Dynamic client registration (RFC 7591): with the registrations no sign-in uses expiring after
 *   a day (oauth-adapter.ts), the store holds at most a day's worth of the deployment's rate.
 * - An authorization request (`/oauth/authorize`), which stores an interaction for the sign-in
 *   page: kept at most 30 minutes (oauth-provider.ts), so the store holds at most 30 minutes of
 *   the deployment's rate and its reserve: 30 x 200 + 2,000 = 8,000 by default (GENERATION_HTTP_LIMITS'
 *   signInsPerMinute and signInReserve set both, for authorization requests and sign-in posts).
 * - The sign-in form posted (`/oauth/sign-in/<uid>`): each post with a well-formed key has the
 *   service check it, so the server relays no flood of key checks to the service.
 * - Client ID Metadata Documents fetched (cimd-guard.ts): each a request to another host.
 * What is counted is the request as oidc-provider routes it (oauth-routes.ts): any case, one
 * trailing slash, HEAD as GET.
 *
 * The client's address is the peer's, unless the peer is a proxy the operator listed in
 * GENERATION_TRUSTED_PROXIES: then X-Forwarded-For is read from the right, past every trusted
 * hop, and the first address not trusted is the client (the left part of the header is whatever
 * the client wrote, so it is never believed).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type BlockList, isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { RateLimiterRes } from "rate-limiter-flexible";
import type { KeyedStore } from "../../ledger/open-ledger.js";
import type { OAuthLog } from "./oauth-log.js";
import { type Limiter, storeLimiter } from "./store-limiter.js";

export interface Rates {
  /** From one address (an IPv6 /64), a minute. */
  perSource: number;
  /** On the whole deployment, a minute. */
  perDeployment: number;
  /** The deployment's reserve for bursts, over RESERVE_S, spent once a minute's figure is. */
  reserve: number;
}
/** The window of the deployments' reserves: the life of an authorization's interaction. */
export const RESERVE_S = 30 * 60;
export const REGISTRATIONS: Rates = { perSource: 20, perDeployment: 120, reserve: 0 };
/**
 * A sign-in is one or two authorization requests; an office behind one address may hold many
 * users, and many users may sign in at once (a host rolled out to a team), hence the reserve.
 */
export const AUTHORIZATIONS: Rates = { perSource: 60, perDeployment: 200, reserve: 2_000 };
/** A user mistypes a key a few times; many users may sign in at once. */
export const SIGN_INS: Rates = { perSource: 30, perDeployment: 200, reserve: 2_000 };
/**
 * Client ID Metadata Documents fetched (only fetches: a cached document costs nothing). Hosts
 * publish a handful of documents, each cached 1 minute to 1 hour (oauth-provider.ts).
 */
export const FETCHES: Rates = { perSource: 20, perDeployment: 120, reserve: 0 };

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

/** What a source is counted by: an IPv4 address, or an IPv6 address's /64 (however spelled). */
export function sourceOf(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (ip.kind() === "ipv4") return ip.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${ip.toString().replace(/%.*$/, "")}/64`).toString()}/64`;
}

export type Admission = { ok: true } | { ok: false; source: string; retryAfterS: number; limit: string };

const refusedFor = (source: string, res: unknown, limit: string): Admission => {
  const ms = res instanceof RateLimiterRes ? res.msBeforeNext : 1_000;
  return { ok: false, source, retryAfterS: Math.max(1, Math.ceil(ms / 1000)), limit };
};

/**
 * One kind of request counted per source and per deployment, in the store (or memory without one).
 * With a store, the same figures are first checked in this replica's memory: what one replica
 * alone would refuse is refused without a write, so a flood costs the store at most a window's
 * figure of writes per replica, however fast it comes.
 */
export class RateLimit {
  readonly #source: Limiter;
  readonly #deployment: Limiter;
  readonly #reserve: Limiter | undefined;
  readonly #local: RateLimit | undefined;

  constructor(
    kv: KeyedStore | undefined,
    private readonly name: string,
    private readonly rates: Rates,
  ) {
    this.#local = kv === undefined ? undefined : new RateLimit(undefined, name, rates);
    this.#source = storeLimiter(kv, `rl:${name}:src`, { points: rates.perSource, seconds: 60 });
    this.#deployment = storeLimiter(kv, `rl:${name}:all`, { points: rates.perDeployment, seconds: 60 });
    this.#reserve =
      rates.reserve > 0
        ? storeLimiter(kv, `rl:${name}:reserve`, { points: rates.reserve, seconds: RESERVE_S })
        : undefined;
  }

  /** Counts one request from `source`; refuses it when the source, or the deployment, is over. */
  async admit(source: string): Promise<Admission> {
    const local = await this.#local?.admit(source);
    if (local !== undefined && !local.ok) return local;
    // In memory alone, a deployment already over is said before a source is remembered: then
    // however many distinct sources come, no more than the figures' worth are held a window.
    const full = this.#local === undefined ? await this.#spent() : undefined;
    if (full !== undefined) return refusedFor(source, full, this.#over());
    try {
      await this.#source.consume(source);
    } catch (res) {
      return refusedFor(source, res, `at most ${this.rates.perSource} a minute from one address`);
    }
    try {
      await this.#deployment.consume("all");
    } catch (minute) {
      if (this.#reserve === undefined) return refusedFor(source, minute, this.#over());
      try {
        await this.#reserve.consume("all");
      } catch {
        return refusedFor(source, minute, this.#over());
      }
    }
    return { ok: true };
  }

  #over(): string {
    const r = this.rates;
    const reserve = r.reserve > 0 ? ` (and a reserve of ${r.reserve} per ${RESERVE_S / 60} minutes)` : "";
    return `at most ${r.perDeployment} a minute on this deployment${reserve}`;
  }

  /** The minute's count when it and the reserve are spent (read, not counted); else undefined. */
  async #spent(): Promise<RateLimiterRes | undefined> {
    const minute = await this.#deployment.get("all");
    if (minute === null || minute.consumedPoints < this.rates.perDeployment) return undefined;
    const reserve = this.#reserve === undefined ? null : await this.#reserve.get("all");
    if (this.#reserve !== undefined && (reserve === null || reserve.consumedPoints < this.rates.reserve))
      return undefined;
    return minute;
  }

  /** Counts `req` from its client address (`trusted`: the proxies whose X-Forwarded-For is read). */
  admitRequest(req: IncomingMessage, trusted: BlockList | undefined): Promise<Admission> {
    return this.admit(sourceOf(clientAddress(req, trusted)));
  }

  toString(): string {
    return this.name;
  }
}

/** What a refusal names, and what it suggests instead. */
export interface Limited {
  name: string;
  plural: string;
  instead: string;
}
export const REGISTRATION: Limited = {
  name: "registration",
  plural: "client registrations",
  instead: ", or register by Client ID Metadata Document",
};
export const AUTHORIZATION: Limited = {
  name: "authorization request",
  plural: "authorization requests",
  instead: "",
};
export const SIGN_IN: Limited = { name: "sign-in", plural: "sign-in attempts", instead: "" };
export const FETCH: Limited = {
  name: "client metadata document fetch",
  plural: "client metadata document fetches",
  instead: "",
};

/** The 429 (RFC 6585) for a refused request: headers and JSON body naming the limit. */
export function refusalOf(
  what: Limited,
  admission: Exclude<Admission, { ok: true }>,
): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      "content-type": "application/json",
      "cache-control": "no-store",
      "retry-after": String(admission.retryAfterS),
    },
    body: JSON.stringify({
      error: "too_many_requests",
      error_description: `Too many ${what.plural}: ${admission.limit}. Retry after ${admission.retryAfterS} s${what.instead}.`,
    }),
  };
}

/** Every limit of the authorization server, counted in `kv` (the ledger's store) when given. */
export interface OAuthLimits {
  registrations: RateLimit;
  authorizations: RateLimit;
  signIns: RateLimit;
  fetches: RateLimit;
  trusted: BlockList | undefined;
  log: OAuthLog;
}

/** The deployment's figures for sign-ins (GENERATION_HTTP_LIMITS: signInsPerMinute, signInReserve). */
export interface SignInRates {
  perDeployment: number;
  reserve: number;
}

export function oauthLimits(
  kv: KeyedStore | undefined,
  trusted: BlockList | undefined,
  log: OAuthLog,
  signIns: Partial<SignInRates> = {},
): OAuthLimits {
  return {
    registrations: new RateLimit(kv, "register", REGISTRATIONS),
    authorizations: new RateLimit(kv, "authorize", { ...AUTHORIZATIONS, ...signIns }),
    signIns: new RateLimit(kv, "sign-in", { ...SIGN_INS, ...signIns }),
    fetches: new RateLimit(kv, "cimd-fetch", FETCHES),
    trusted,
    log,
  };
}

/**
 * Counts one request of kind `what` against `limit`: undefined when admitted, else the 429 to
 * write (and the operator told, once a minute per source).
 */
export async function refusal(
  limits: OAuthLimits,
  limit: RateLimit,
  what: Limited,
  req: IncomingMessage,
): Promise<{ headers: Record<string, string>; body: string } | undefined> {
  const admission = await limit.admitRequest(req, limits.trusted);
  if (admission.ok) return undefined;
  limits.log.rateLimited(what.name, admission.source, admission.limit);
  return refusalOf(what, admission);
}

/** A sign-in form posted (the form's page and its /continue step check no key, but are counted alike). */
export async function admitSignIn(limits: OAuthLimits, req: IncomingMessage, res: ServerResponse) {
  if (req.method !== "POST") return true;
  const refused = await refusal(limits, limits.signIns, SIGN_IN, req);
  if (refused === undefined) return true;
  res.writeHead(429, refused.headers).end(refused.body);
  return false;
}
