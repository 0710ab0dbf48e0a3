/**
 * Accounts: one per service key, named by the key's hash (the same hash that binds every ledger
 * record, session and per-key cap), holding the key sealed (oauth-sealing.ts) and the grants made
 * over it. A replica that has never seen the key opens it from here; when the service refuses the
 * key (revoked or expired upstream) every grant over it is deleted, and with them their tokens
 * (oauth-adapter.ts), so the next request answers 401 and the host asks the user to sign in again.
 */
import type { KeyedStore } from "../../ledger/open-ledger.js";
import { recordKey } from "./oauth-adapter.js";
import type { Sealing } from "./oauth-sealing.js";

interface AccountRecord {
  key: string;
  grants: string[];
}

/** Grants remembered per account; the oldest are forgotten first (they expire on their own). */
const MAX_GRANTS = 200;
const MAX_SWAP_TRIES = 8;

const accountKey = (keyHash: string): string => `oauth:account:${keyHash}`;

export class Accounts {
  /** `ttlMs`: how long an account lives unused, as long as its grants (GENERATION_AUTH_IDLE_TTL). */
  constructor(
    private readonly kv: KeyedStore,
    private readonly sealing: Sealing,
    private readonly ttlMs: number,
  ) {}

  /** Stores the key (sealed) and adds a grant to its account, atomically against other replicas. */
  async remember(keyHash: string, apiKey: string, grantId: string): Promise<void> {
    await this.#update(keyHash, (rec) => ({
      key: this.sealing.seal(apiKey, keyHash),
      grants: [...(rec?.grants ?? []).filter((g) => g !== grantId), grantId].slice(-MAX_GRANTS),
    }));
  }

  /** The key behind an account, or undefined when the account is gone or no secret opens it. */
  async apiKey(keyHash: string): Promise<string | undefined> {
    const raw = await this.kv.get(accountKey(keyHash));
    if (raw === undefined) return undefined;
    const rec = JSON.parse(raw) as AccountRecord;
    const opened = this.sealing.open(rec.key, keyHash);
    if (opened === undefined) return undefined;
    if (opened.stale) {
      // Sealed under a secret being rotated out: seal it again under the new one.
      const next: AccountRecord = { ...rec, key: this.sealing.seal(opened.plain, keyHash) };
      await this.kv.swap(accountKey(keyHash), raw, JSON.stringify(next), this.ttlMs);
    }
    return opened.plain;
  }

  /** The account is in use: it lives `ttlMs` from now, as its grant does. */
  async touch(keyHash: string): Promise<void> {
    await this.#update(keyHash, (rec) => rec);
  }

  async exists(keyHash: string): Promise<boolean> {
    return (await this.kv.get(accountKey(keyHash))) !== undefined;
  }

  /** The service refused the key: its grants (and so their tokens) and the sealed key are deleted. */
  async revoke(keyHash: string): Promise<number> {
    const raw = await this.kv.get(accountKey(keyHash));
    if (raw === undefined) return 0;
    const rec = JSON.parse(raw) as AccountRecord;
    await Promise.all(rec.grants.map((g) => this.kv.delete(recordKey("Grant", g))));
    await this.kv.delete(accountKey(keyHash));
    return rec.grants.length;
  }

  /** Rewrites the account atomically; `change` returning undefined leaves an absent account absent. */
  async #update(
    keyHash: string,
    change: (rec: AccountRecord | undefined) => AccountRecord | undefined,
  ): Promise<void> {
    const key = accountKey(keyHash);
    for (let i = 0; i < MAX_SWAP_TRIES; i++) {
      const raw = await this.kv.get(key);
      const rec = change(raw === undefined ? undefined : (JSON.parse(raw) as AccountRecord));
      if (rec === undefined) return;
      if (await this.kv.swap(key, raw, JSON.stringify(rec), this.ttlMs)) return;
    }
    throw new Error("the account record could not be updated: the store kept changing");
  }
}
