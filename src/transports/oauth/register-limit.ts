/**
 * Dynamic client registration (RFC 7591) is open to anyone, so it is rate-limited: per client
 * address (an IPv6 client by its /64, as one host usually holds a whole /64) and per replica in
 * all, each a token bucket. With the registrations that no sign-in uses expiring after a day
 * (oauth-adapter.ts), the store holds at most a day's worth of the replica-wide rate.
 *
 * The client's address is the peer's, unless the peer is a proxy the operator listed in
 * GENERATION_TRUSTED_PROXIES: then X-Forwarded-For is read from the right, past every trusted
 * hop, and the first address not trusted is the client (the left part of the header is whatever
 * the client wrote, so it is never believed).
 */
import type { IncomingMessage } from "node:http";
import { type BlockList, isIP } from "node:net";
import { LRUCache } from "lru-cache";

export const PER_SOURCE = { burst: 20, perMinute: 20 } as const;
export const PER_REPLICA = { burst: 120, perMinute: 120 } as const;
/** Sources remembered at once; the replica-wide bucket still bounds what forgetting one allows. */
const MAX_SOURCES = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** Takes a token from a bucket refilled continuously; the seconds until one is back when empty. */
function take(bucket: Bucket, rate: { burst: number; perMinute: number }, now: number): number {
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

export class RegistrationLimit {
  readonly #sources = new LRUCache<string, Bucket>({ max: MAX_SOURCES });
  readonly #replica: Bucket = { tokens: PER_REPLICA.burst, at: Date.now() };

  constructor(private readonly trusted: BlockList | undefined) {}

  /** Counts one registration attempt; refuses it when its source, or the replica, is over its rate. */
  admit(req: IncomingMessage, now = Date.now()): Admission {
    const source = sourceOf(clientAddress(req, this.trusted));
    let bucket = this.#sources.get(source);
    if (bucket === undefined) {
      bucket = { tokens: PER_SOURCE.burst, at: now };
      this.#sources.set(source, bucket);
    }
    const steps = [
      [bucket, PER_SOURCE, "from one address"],
      [this.#replica, PER_REPLICA, "on this server"],
    ] as const;
    for (const [b, rate, where] of steps) {
      const wait = take(b, rate, now);
      if (wait > 0)
        return { ok: false, source, retryAfterS: wait, limit: `at most ${rate.perMinute} a minute ${where}` };
    }
    return { ok: true };
  }
}
