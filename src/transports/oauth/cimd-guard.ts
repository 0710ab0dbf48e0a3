/**
 * SSRF guards and limits for Client ID Metadata Documents: a `client_id` that is an https URL
 * makes this server fetch it, so an attacker could aim that fetch at the deployment's own network,
 * or make the server fetch without end. Before any fetch:
 * - the fetch is counted per source address and per deployment (rate-limit.ts FETCHES): only
 *   fetches, as a document cached by oidc-provider is not fetched again;
 * - a document that failed in the last FAILURE_TTL_MS is not fetched again (the failure is
 *   answered at once), and within one request a document is fetched at most once (oidc-provider
 *   looks a client up again to render an authorization error, which would fetch a failing
 *   document a second time);
 * - the host's addresses are resolved, each parsed by the ipaddr library whatever its spelling (decimal,
 *   hex, short IPv4, IPv4-mapped, compressed or expanded IPv6), an IPv4-mapped one judged as its
 *   IPv4, and only public unicast addresses pass: IPv4 outside every special-use range, IPv6 in
 *   global unicast (2000::/3) outside every special-use range there (so NAT64 64:ff9b::/96,
 *   IPv4-compatible ::/96, 6to4 and Teredo, which embed an IPv4 address, never pass).
 * oidc-provider then fetches without redirects, within 2.5 s and 5 KiB, through a dispatcher that
 * checks the address it actually connected to (safe against DNS rebinding between our lookup and
 * its connect), and caches the document per its Cache-Control (here 1 minute to 1 hour).
 * Loopback documents are allowed only when testing on loopback (GENERATION_PUBLIC_URL on http
 * loopback); private and link-local addresses never are.
 */
import { lookup } from "node:dns/promises";
import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { LRUCache } from "lru-cache";
import { errors } from "oidc-provider";
import { FETCH, type OAuthLimits, refusal } from "./rate-limit.js";

/** Special-use IPv4 ranges, a second check beside the ipaddr library's own ranges. */
const SPECIAL = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  SPECIAL.addSubnet(net, prefix, "ipv4");
const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

/**
 * Whether an address may be fetched from, however it is spelled: only public unicast (see the
 * header); loopback (127.0.0.0/8, ::1) also when `allowLoopback`.
 */
export function addressAllowed(address: string, allowLoopback: boolean): boolean {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/^\[|\]$/g, ""));
  } catch {
    return false;
  }
  if (ip instanceof ipaddr.IPv6 && ip.isIPv4MappedAddress()) ip = ip.toIPv4Address();
  const range = ip.range();
  if (range === "loopback") return allowLoopback;
  if (range !== "unicast") return false;
  if (ip instanceof ipaddr.IPv4) return !SPECIAL.check(ip.toString(), "ipv4");
  return ip.match(GLOBAL_UNICAST) && ip.zoneId === undefined;
}

/** The SSRF check alone: true, or an invalid_client error that says why. */
export async function cimdGuard(clientId: string, allowLoopback: boolean): Promise<boolean> {
  const url = URL.parse(clientId);
  if (url === null || url.protocol !== "https:") {
    throw new errors.InvalidClient("a client_id metadata document must be served over https");
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  try {
    addresses = isIP(host)
      ? [host]
      : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    throw new errors.InvalidClient("the client_id metadata document's host does not resolve");
  }
  if (addresses.length === 0 || !addresses.every((a) => addressAllowed(a, allowLoopback))) {
    throw new errors.InvalidClient(
      "the client_id metadata document's host resolves to a private, loopback or reserved address, which this server does not fetch",
    );
  }
  return true;
}

/** How long a document that could not be fetched or used is answered as failed without a fetch. */
export const FAILURE_TTL_MS = 30_000;

/** The documents that failed lately, and the requests that already fetched each. */
export class CimdFetches {
  readonly #failed = new LRUCache<string, number>({ max: 10_000, ttl: FAILURE_TTL_MS });
  readonly #fetched = new WeakMap<object, Map<string, true | Error>>();

  constructor(
    private readonly allowLoopback: boolean,
    private readonly limits: OAuthLimits | undefined,
  ) {}

  /** The document at `clientId` could not be fetched or used. */
  failed(clientId: string): void {
    // A failure is remembered from when it happened: asking again does not prolong it.
    if (this.#failed.has(clientId)) return;
    this.#failed.set(clientId, Date.now() + FAILURE_TTL_MS);
  }

  /** oidc-provider's allowFetch (called only when the document is not cached): true, or why not. */
  async allowFetch(ctx: { req?: IncomingMessage } | undefined, clientId: string): Promise<boolean> {
    const until = this.#failed.get(clientId);
    if (until !== undefined) {
      const s = Math.max(1, Math.ceil((until - Date.now()) / 1000));
      throw new errors.InvalidClient(
        `the client_id metadata document could not be fetched or used a moment ago; it is fetched again in ${s} s`,
      );
    }
    const seen = ctx === undefined ? undefined : this.#fetched.get(ctx);
    const before = seen?.get(clientId);
    // Looked up again within one request: a refusal stands; a fetch allowed then failed.
    if (before instanceof Error) throw before;
    if (before === true) {
      this.failed(clientId);
      throw new errors.InvalidClient("the client_id metadata document could not be fetched or used");
    }
    const outcome = await this.#check(ctx, clientId).catch((error: Error) => error);
    if (ctx !== undefined) this.#fetched.set(ctx, (seen ?? new Map()).set(clientId, outcome));
    if (outcome instanceof Error) throw outcome;
    return true;
  }

  async #check(ctx: { req?: IncomingMessage } | undefined, clientId: string): Promise<true> {
    if (this.limits !== undefined && ctx?.req !== undefined) {
      const refused = await refusal(this.limits, this.limits.fetches, FETCH, ctx.req);
      if (refused !== undefined) {
        const e = new errors.InvalidClient(JSON.parse(refused.body).error_description);
        throw Object.assign(e, { status: 429, statusCode: 429, error: "too_many_requests" });
      }
    }
    await cimdGuard(clientId, this.allowLoopback);
    return true;
  }

  /**
   * The fetch oidc-provider uses; a failed fetch is remembered. When testing on loopback its
   * connect-time guard (which refuses loopback) is set aside: the guard has already refused every
   * other special-use address.
   */
  fetch(): typeof fetch {
    return async (url, options) => {
      let rest = options;
      if (this.allowLoopback && options !== undefined) {
        const { dispatcher: _ignored, ...others } = options as RequestInit & { dispatcher?: unknown };
        rest = others;
      }
      const id = String(url);
      try {
        const response = await globalThis.fetch(url, rest);
        if (response.status !== 200) this.failed(id);
        return response;
      } catch (error) {
        this.failed(id);
        throw error;
      }
    };
  }
}
