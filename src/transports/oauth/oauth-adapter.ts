/**
 * oidc-provider's storage adapter over the ledger's keyed values (src/ledger/keyed-store.ts), so
 * every replica on one store sees every client, grant and token. Identifiers are stored only as
 * hashes: an opaque access token, refresh token or authorization code *is* its identifier
 * (oidc-provider's opaque format), so the store never holds one usable as a bearer; a registered
 * client's secret is stored as its hash too (compared by `secretMatches`).
 *
 * Consuming a code or refresh token is a compare-and-set: of two replicas redeeming one at once,
 * one wins. A second use of a code revokes its grant (reuse detection), as oidc-provider itself
 * does for a sequential reuse. A refresh token used again within the grace after its rotation (a
 * raced or retried refresh) is redeemed again instead: each such use gets its own new tokens,
 * all valid; after the grace a reuse revokes the grant, and with it every token of the family.
 *
 * A registered client is kept a day (`UNUSED_CLIENT_TTL_MS`) unless a sign-in uses it; then it
 * lives as long as its grants (`touch`).
 */
import { timingSafeEqual } from "node:crypto";
import { type Adapter, type AdapterPayload, errors } from "oidc-provider";
import type { KeyedStore } from "../../ledger/open-ledger.js";
import { hashId } from "./oauth-sealing.js";

/** What is stored: the payload (its `jti` removed when it is the identifier) and its expiry. */
interface Stored {
  p: AdapterPayload;
  /** Expires at (ms since the epoch). */
  x: number;
  /** The payload's jti was its identifier, left out. */
  j?: 1;
  /** When it was consumed (ms), for the refresh grace. */
  c?: number;
}

/** A registration that no sign-in used is deleted after this: anonymous registrations do not pile up. */
export const UNUSED_CLIENT_TTL_MS = 24 * 60 * 60 * 1000;
/** Records with no expiry of their own (none today: clients have UNUSED_CLIENT_TTL_MS). */
const NO_EXPIRY_MS = 10 * 365 * 24 * 60 * 60 * 1000;
const MAX_SWAP_TRIES = 5;
const SECRET_PREFIX = "sha256:";

export const recordKey = (model: string, id: string): string => `oauth:${model}:${hashId(id)}`;

/** A client secret as stored: its hash. */
export const storedSecret = (secret: string): string => `${SECRET_PREFIX}${hashId(secret)}`;

/** Whether `given` is the secret behind `stored` (a hash; a plain secret stored by an older version). */
export function secretMatches(stored: string | undefined, given: string): boolean {
  if (stored === undefined) return false;
  const want = Buffer.from(stored);
  const have = Buffer.from(stored.startsWith(SECRET_PREFIX) ? storedSecret(given) : given);
  return want.length === have.length && timingSafeEqual(want, have);
}

export interface AdapterOptions {
  /** How long a refresh token just rotated may be redeemed again (0: never). */
  refreshGraceMs: number;
  /** Told when a second use revokes a grant (the reason is logged). */
  onReuse?(model: string, grantId: string): void;
}

export class StoreAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly kv: KeyedStore,
    private readonly o: AdapterOptions = { refreshGraceMs: 0 },
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
    const p: AdapterPayload = { ...payload };
    let ttl = expiresIn === undefined || !Number.isFinite(expiresIn) ? NO_EXPIRY_MS : expiresIn * 1000;
    if (this.model === "Client") {
      ttl = UNUSED_CLIENT_TTL_MS;
      if (typeof p.client_secret === "string" && !p.client_secret.startsWith(SECRET_PREFIX)) {
        p.client_secret = storedSecret(p.client_secret);
      }
    }
    const stored: Stored = { p, x: Date.now() + ttl };
    if (payload.jti === id) {
      delete stored.p.jti;
      stored.j = 1;
    }
    await this.kv.put(recordKey(this.model, id), JSON.stringify(stored), ttl);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const raw = await this.kv.get(recordKey(this.model, id));
    if (raw === undefined) return undefined;
    const stored = JSON.parse(raw) as Stored;
    const payload = payloadOf(stored, id);
    // Within the grace a just-rotated refresh token reads as unused, so the token endpoint redeems it again.
    if (this.#inGrace(stored)) delete payload.consumed;
    return payload;
  }

  /** Marks a code or refresh token used, once: a second use revokes its grant (see the header). */
  async consume(id: string): Promise<void> {
    const key = recordKey(this.model, id);
    for (let i = 0; i < MAX_SWAP_TRIES; i++) {
      const raw = await this.kv.get(key);
      if (raw === undefined) return;
      const stored = JSON.parse(raw) as Stored;
      if (stored.p.consumed !== undefined) {
        if (this.#inGrace(stored)) return;
        if (typeof stored.p.grantId === "string") {
          await this.revokeByGrantId(stored.p.grantId);
          this.o.onReuse?.(this.model, stored.p.grantId);
        }
        throw new errors.InvalidGrant(
          `${this.model === "RefreshToken" ? "refresh token" : "grant"} already used`,
        );
      }
      const now = Date.now();
      const next: Stored = { ...stored, p: { ...stored.p, consumed: Math.floor(now / 1000) }, c: now };
      if (await this.kv.swap(key, raw, JSON.stringify(next), Math.max(1, stored.x - now))) return;
    }
    throw new Error(`the ${this.model} could not be marked used: the store kept changing`);
  }

  async destroy(id: string): Promise<void> {
    await this.kv.delete(recordKey(this.model, id));
  }

  /**
   * Every token of a grant dies with the grant: the resource server (oauth-gate.ts) and the token
   * endpoint (oidc-provider's own grant check) refuse a token whose grant is gone, so deleting
   * the grant revokes its whole family on every replica at once, with no index to keep.
   */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.kv.delete(recordKey("Grant", grantId));
  }

  /** Extends a record to live `ttlS` seconds from now (a grant in use, the client it serves). */
  async touch(id: string, ttlS: number): Promise<void> {
    const key = recordKey(this.model, id);
    for (let i = 0; i < MAX_SWAP_TRIES; i++) {
      const raw = await this.kv.get(key);
      if (raw === undefined) return;
      const stored = JSON.parse(raw) as Stored;
      const now = Date.now();
      const p = stored.p.exp === undefined ? stored.p : { ...stored.p, exp: Math.floor(now / 1000) + ttlS };
      const next: Stored = { ...stored, p, x: now + ttlS * 1000 };
      if (await this.kv.swap(key, raw, JSON.stringify(next), ttlS * 1000)) return;
    }
  }

  // Neither the device flow nor session lookups by uid are enabled.
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async findByUid(): Promise<undefined> {
    return undefined;
  }

  #inGrace(stored: Stored): boolean {
    if (this.model !== "RefreshToken" || stored.p.consumed === undefined) return false;
    const at = stored.c ?? stored.p.consumed * 1000;
    return this.o.refreshGraceMs > 0 && Date.now() - at <= this.o.refreshGraceMs;
  }
}

function payloadOf(stored: Stored, id: string): AdapterPayload {
  return stored.j === 1 ? { ...stored.p, jti: id } : { ...stored.p };
}
