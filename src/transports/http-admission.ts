/**
 * Admission by rate, so that one key or one address cannot take more than its share of the
 * process's CPU: a budget of requests and of request-body bytes per minute, per key once the
 * credential is checked (its check is cached, oauth/token-checks.ts), and per client address for
 * requests no credential admits (the OAuth routes, /mcp refused 401/403). A request past either
 * budget is refused 429 with `Retry-After`, naming the setting, before its body is read (the
 * declared Content-Length is counted; a body without one is counted as it streams in, see
 * http-guard.ts's readJson). Reading and parsing bodies is the costliest thing a caller can make
 * this process do: a 16 MiB JSON body costs about 60 ms of one core's time. Counted in this
 * process's memory on purpose: CPU is per process, so each replica grants each key its own share
 * (docs/security.md, "Pools and fair shares"). Counters are rate-limiter-flexible's memory limiter
 * (fixed windows of a minute, and of BURST_S within it); each lives one window, so the heap follows
 * who came this minute.
 * They hold where strangers can reach the server (`--auth oauth`, or bound beyond loopback), or
 * wherever one of them is set: on loopback in key mode every caller is a process of this machine
 * (npm run bench's part (c) is 100 local sessions on one key), whose CPU the OS shares out.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { BlockList } from "node:net";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { ServeLimits } from "../config/serve-limits.js";
import { type LimitLog, sourceOfKey } from "../shared/fair-shares.js";
import { refuseUnread } from "./http-guard.js";
import { clientAddress, sourceOf } from "./oauth/rate-limit.js";

const WINDOW_S = 60;
const MIB = 1024 * 1024;

/** A request refused for its owner's rate: the setting it passed and when to retry. */
export interface RateRefusal {
  limit: string;
  retryAfterS: number;
  message: string;
}

/**
 * The short window: within any of its fixed windows a key spends at most three times the
 * minute's average pace, so a key's minute is not all spent in its first
 * seconds. Under issue 30's hostile mix one key's 600 requests and 512 MiB of bodies, all at a
 * minute's start, held the process's core busy for seven seconds and the users' p99 with it
 * (docs/benchmarks.md). Small budgets are not split (a burst of up to 20 requests, or of the
 * largest body, is always allowed within the minute's budget).
 */
const BURST_S = 1;
/** The short window's share of the minute: three times the minute's average pace. */
const BURST_SHARE = WINDOW_S / BURST_S / 3;
const BURST_MIN_REQUESTS = 20;
const BURST_MIN_MIB = 48;

/**
 * A budget counted over a minute and, where `floor` splits it, over its short window (BURST_S).
 * Addresses' budgets are not split: what no credential admits is already bounded to a share of
 * each second for every address together (`anonymousPerSecond`, http-anonymous.ts), and the OAuth
 * routes keep their own bursts.
 */
class Windows {
  readonly #minute: RateLimiterMemory;
  readonly #burst: RateLimiterMemory | undefined;
  /** Points within one short window. */
  readonly burstPoints: number;

  constructor(perMinute: number, floor: number) {
    this.#minute = new RateLimiterMemory({ points: perMinute, duration: WINDOW_S });
    const burst = Math.max(Math.ceil(perMinute / BURST_SHARE), Math.min(perMinute, floor));
    this.burstPoints = burst;
    if (burst < perMinute) this.#burst = new RateLimiterMemory({ points: burst, duration: BURST_S });
  }

  /** Takes `points` from both windows: undefined, or the ms until the one that refused renews. */
  async take(owner: string, points: number): Promise<{ ms: number; burst: boolean } | undefined> {
    const minute = await refusedMs(this.#minute, owner, points);
    if (minute !== undefined) return { ms: minute, burst: false };
    const burst = this.#burst === undefined ? undefined : await refusedMs(this.#burst, owner, points);
    if (burst === undefined) return undefined;
    await this.#minute.reward(owner, points);
    return { ms: burst, burst: true };
  }

  give(owner: string, points: number): Promise<unknown> {
    return Promise.all([this.#minute.reward(owner, points), this.#burst?.reward(owner, points)]);
  }
}

/** Consumes `points`; a refusal gives them back (a refused request used nothing) and says when to retry. */
async function refusedMs(
  limiter: RateLimiterMemory,
  owner: string,
  points: number,
): Promise<number | undefined> {
  try {
    await limiter.consume(owner, points);
    return undefined;
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    await limiter.reward(owner, points);
    return error.msBeforeNext;
  }
}

/** Requests and body bytes per window for one kind of owner (keys, or addresses). */
class Budget {
  readonly #requests: Windows;
  readonly #bytes: Windows;

  constructor(
    readonly requests: { name: string; perMinute: number },
    readonly bytes: { name: string; mibPerMinute: number },
    readonly whose: string,
    split: boolean,
  ) {
    const floor = (n: number) => (split ? n : Number.POSITIVE_INFINITY);
    this.#requests = new Windows(requests.perMinute, floor(BURST_MIN_REQUESTS));
    this.#bytes = new Windows(bytes.mibPerMinute * MIB, floor(BURST_MIN_MIB * MIB));
  }

  /** Counts one request of `owner` and `bytes` of its body; what was refused is not counted. */
  async take(owner: string, bytes: number): Promise<RateRefusal | undefined> {
    const request = await this.#requests.take(owner, 1);
    if (request !== undefined) return this.#requestsRefused(request);
    if (bytes <= 0) return undefined;
    const body = await this.moreBytes(owner, bytes);
    if (body !== undefined) await this.#requests.give(owner, 1);
    return body;
  }

  /** Counts `bytes` more of a body already admitted (one streamed without a declared length). */
  async moreBytes(owner: string, bytes: number): Promise<RateRefusal | undefined> {
    const refused = await this.#bytes.take(owner, bytes);
    return refused === undefined ? undefined : this.#bytesRefused(refused);
  }

  #requestsRefused = ({ ms, burst }: { ms: number; burst: boolean }): RateRefusal => {
    const { name, perMinute } = this.requests;
    const what = burst
      ? `${this.whose} sent ${this.#requests.burstPoints} requests within ${BURST_S} s (three times the pace of ${perMinute} a minute)`
      : `${this.whose} sent ${perMinute} requests this minute`;
    return refusal(name, ms, what);
  };

  #bytesRefused = ({ ms, burst }: { ms: number; burst: boolean }): RateRefusal => {
    const { name, mibPerMinute } = this.bytes;
    const what = burst
      ? `${this.whose} would pass ${Math.round(this.#bytes.burstPoints / MIB)} MiB of request bodies within ${BURST_S} s (three times the pace of ${mibPerMinute} MiB a minute, or the largest body)`
      : `${this.whose} would pass ${mibPerMinute} MiB of request bodies this minute`;
    return refusal(name, ms, what);
  };
}

function refusal(limit: string, ms: number, what: string): RateRefusal {
  const retryAfterS = Math.max(1, Math.ceil(ms / 1000));
  return {
    limit,
    retryAfterS,
    message: `Too Many Requests: ${what} (${limit}); retry after ${retryAfterS} s`,
  };
}

const RATES = [
  "requestsPerKeyMinute",
  "bodyMiBPerKeyMinute",
  "requestsPerAddressMinute",
  "bodyMiBPerAddressMinute",
  "anonymousPerSecond",
  "anonymousInFlight",
] as const;

/** Whether the operator set any of the rates (then they hold on loopback in key mode too). */
export const ratesSet = (set: Partial<ServeLimits> | undefined): boolean =>
  RATES.some((name) => set?.[name] !== undefined);

/** A request's declared body length (0 when it declares none). */
export function declaredBytes(req: IncomingMessage): number {
  const n = Number(req.headers["content-length"] ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

export class Admission {
  readonly #keys: Budget;
  readonly #addresses: Budget;
  readonly #trusted: BlockList | undefined;

  /** `enforced` false: nothing is counted or refused (HTTP on loopback in key mode, rates not set). */
  constructor(
    limits: ServeLimits,
    readonly log: LimitLog,
    isProxy?: (address: string) => boolean,
    readonly enforced = true,
  ) {
    this.#keys = new Budget(
      { name: "requestsPerKeyMinute", perMinute: limits.requestsPerKeyMinute },
      { name: "bodyMiBPerKeyMinute", mibPerMinute: limits.bodyMiBPerKeyMinute },
      "this key",
      true,
    );
    this.#addresses = new Budget(
      { name: "requestsPerAddressMinute", perMinute: limits.requestsPerAddressMinute },
      { name: "bodyMiBPerAddressMinute", mibPerMinute: limits.bodyMiBPerAddressMinute },
      "this address, not signed in,",
      false,
    );
    // clientAddress reads X-Forwarded-For only through a proxy it trusts; `check` is all it asks.
    this.#trusted = isProxy === undefined ? undefined : ({ check: (a: string) => isProxy(a) } as BlockList);
  }

  /** The source a request without a credential is counted by: its address (an IPv6 /64). */
  sourceOf(req: IncomingMessage): string {
    return sourceOf(clientAddress(req, this.#trusted));
  }

  /** One request no credential admitted, from `source`, with its declared body. */
  async anonymous(req: IncomingMessage, source: string): Promise<RateRefusal | undefined> {
    if (!this.enforced) return undefined;
    return this.#noted(await this.#addresses.take(source, declaredBytes(req)), `address ${source}`);
  }

  /** One request of a checked key, with its declared body. */
  async keyed(req: IncomingMessage, keyHash: string): Promise<RateRefusal | undefined> {
    if (!this.enforced) return undefined;
    return this.#noted(await this.#keys.take(keyHash, declaredBytes(req)), sourceOfKey(keyHash));
  }

  /** Bytes of a key's body that declared no length, as they arrive. */
  async streamed(keyHash: string, bytes: number): Promise<RateRefusal | undefined> {
    if (!this.enforced) return undefined;
    return this.#noted(await this.#keys.moreBytes(keyHash, bytes), sourceOfKey(keyHash));
  }

  #noted(refused: RateRefusal | undefined, source: string): RateRefusal | undefined {
    if (refused !== undefined)
      this.log.note(refused.limit, source, `refused a request: ${refused.limit} reached`);
    return refused;
  }
}

/** The 429 of a request past its rate, its body left unread (refuseUnread). */
export function refuseRate(req: IncomingMessage, res: ServerResponse, refused: RateRefusal): void {
  refuseUnread(req, res, 429, refused.message, { "retry-after": String(refused.retryAfterS) });
}
