/**
 * oidc-provider's storage adapter over the ledger's keyed values (src/ledger/keyed.ts), so every
 * replica on one store sees every client, grant and token. Identifiers are stored only as hashes:
 * an opaque access token, refresh token or authorization code *is* its identifier (oidc-provider's
 * opaque format), so the store never holds one usable as a bearer. Consuming a code or refresh
 * token is a compare-and-set: of two replicas redeeming one at once, one wins and the other
 * revokes the grant (reuse detection), as oidc-provider itself does for a sequential reuse.
 */
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
}

/** Records with no expiry of their own (registered clients) are kept this long. */
const NO_EXPIRY_MS = 10 * 365 * 24 * 60 * 60 * 1000;
const MAX_SWAP_TRIES = 5;

export const recordKey = (model: string, id: string): string => `oauth:${model}:${hashId(id)}`;

export class StoreAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly kv: KeyedStore,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
    const ttl = expiresIn === undefined || !Number.isFinite(expiresIn) ? NO_EXPIRY_MS : expiresIn * 1000;
    const stored: Stored = { p: { ...payload }, x: Date.now() + ttl };
    if (payload.jti === id) {
      delete stored.p.jti;
      stored.j = 1;
    }
    await this.kv.put(recordKey(this.model, id), JSON.stringify(stored), ttl);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const raw = await this.kv.get(recordKey(this.model, id));
    return raw === undefined ? undefined : payloadOf(JSON.parse(raw) as Stored, id);
  }

  /** Marks a code or refresh token used, once: a second use, even racing, revokes its grant. */
  async consume(id: string): Promise<void> {
    const key = recordKey(this.model, id);
    for (let i = 0; i < MAX_SWAP_TRIES; i++) {
      const raw = await this.kv.get(key);
      if (raw === undefined) return;
      const stored = JSON.parse(raw) as Stored;
      if (stored.p.consumed !== undefined) {
        if (typeof stored.p.grantId === "string") await this.revokeByGrantId(stored.p.grantId);
        throw new errors.InvalidGrant(
          `${this.model === "RefreshToken" ? "refresh token" : "grant"} already used`,
        );
      }
      const next: Stored = { ...stored, p: { ...stored.p, consumed: Math.floor(Date.now() / 1000) } };
      if (await this.kv.swap(key, raw, JSON.stringify(next), Math.max(1, stored.x - Date.now()))) return;
    }
    throw new Error(`the ${this.model} could not be marked used: the store kept changing`);
  }

  async destroy(id: string): Promise<void> {
    await this.kv.delete(recordKey(this.model, id));
  }

  /**
   * Every token of a grant dies with the grant: the resource server (verify.ts) and the token
   * endpoint (oidc-provider's own grant check) refuse a token whose grant is gone, so deleting
   * the grant revokes its whole family on every replica at once, with no index to keep.
   */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.kv.delete(recordKey("Grant", grantId));
  }

  // Neither the device flow nor session lookups by uid are enabled.
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async findByUid(): Promise<undefined> {
    return undefined;
  }
}

function payloadOf(stored: Stored, id: string): AdapterPayload {
  return stored.j === 1 ? { ...stored.p, jti: id } : stored.p;
}
