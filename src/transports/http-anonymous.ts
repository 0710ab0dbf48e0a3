/**
 * A process-wide share for work no credential admits: the OAuth routes, /mcp without a valid
 * token, the well-known documents. The per-address budget (http-admission.ts) cannot bound a flood
 * from many addresses (npm run bench's part (n) sends from 65,536, each request as soon as the
 * last is answered), and each such request costs this process's one event loop parsing and store
 * work (interactions, clients, the OAuth limits' own counters) that signed-in users then wait
 * behind. So, across all addresses: at most `anonymousPerSecond` such requests are admitted a
 * second and `anonymousInFlight` at once; the rest are refused 503 with `Retry-After: 1` before
 * anything is parsed or stored, and signed-in requests never take from it. It sits in front of
 * the OAuth routes' per-deployment limits (oauth/rate-limit.ts), which count in the store: the
 * share keeps a flood from reaching the store at all. It refills each second, so a flood delays a
 * newcomer's sign-in by seconds, never locks it out; and a quarter of each second is kept for the
 * steps of a sign-in already under way (the sign-in page and its post, the return to authorize),
 * so a flood of new registrations, authorizations or tokenless calls cannot take all of it.
 * Counted in this process's memory on purpose: the event loop it protects is per process.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { LimitLog } from "../shared/fair-shares.js";
import { refuseUnread } from "./http-guard.js";

/** The part of a second's share that requests other than a sign-in under way may take. */
const NEW_PART = 0.75;
/** A step of a sign-in under way: the sign-in page or its post, or the return to authorize. */
const UNDER_WAY = /^\/oauth\/(sign-in|authorize)\/[^/]+\/?$/i;

export interface ShareLimits {
  anonymousPerSecond: number;
  anonymousInFlight: number;
}

/** A refusal's setting, or the function that gives the place back. */
export type Place = { limit: keyof ShareLimits } | { release(): void };

export class AnonymousShare {
  #second = 0;
  #taken = 0;
  #inFlight = 0;

  /** `enforced` false: every request is admitted (loopback in key mode, as http-admission.ts). */
  constructor(
    readonly limits: ShareLimits,
    readonly log: LimitLog,
    readonly enforced = true,
    readonly now: () => number = Date.now,
  ) {}

  /** Whether `path` is a step of a sign-in under way (favoured within the second's share). */
  static underWay(path: string): boolean {
    return UNDER_WAY.test(path);
  }

  /** One place for a request no credential admits, to `path`; synchronous, nothing else done. */
  take(path: string): Place {
    if (!this.enforced) return { release: () => {} };
    const second = Math.floor(this.now() / 1000);
    if (second !== this.#second) {
      this.#second = second;
      this.#taken = 0;
    }
    const { anonymousPerSecond, anonymousInFlight } = this.limits;
    const allowed = AnonymousShare.underWay(path)
      ? anonymousPerSecond
      : Math.max(1, Math.floor(anonymousPerSecond * NEW_PART));
    if (this.#inFlight >= anonymousInFlight) return this.#refused("anonymousInFlight");
    if (this.#taken >= allowed) return this.#refused("anonymousPerSecond");
    this.#taken++;
    this.#inFlight++;
    let held = true;
    return {
      release: () => {
        if (held) this.#inFlight--;
        held = false;
      },
    };
  }

  /** Requests in flight now (for tests and the report). */
  get inFlight(): number {
    return this.#inFlight;
  }

  #refused(limit: keyof ShareLimits): Place {
    // One line a minute however long the flood (LimitLog), not one per request.
    this.log.note(limit, "strangers", `refused requests no credential admits: ${limit} reached`);
    return { limit };
  }
}

/**
 * `req`'s place in the share, held until its answer ends; false when refused (then answered 503
 * with `Retry-After`, the body unread and the connection kept if the request was whole).
 */
export function holdPlace(
  share: AnonymousShare,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): boolean {
  const place = share.take(path);
  if ("release" in place) {
    res.once("close", place.release);
    return true;
  }
  refuseUnread(
    req,
    res,
    503,
    `Service Unavailable: this server is answering as many requests without a credential as it takes (${place.limit}); retry after 1 s`,
    { "retry-after": "1" },
  );
  return false;
}
