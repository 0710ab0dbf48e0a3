/**
 * Access tokens already checked against the store, remembered for at most TOKEN_RECHECK_MS, so a
 * signed-in user's requests do not each cost two store reads (the token's record and its grant,
 * oauth-gate.ts). Revocation stays bounded: a token is served from here only while its last check
 * *started* less than TOKEN_RECHECK_MS ago, so a grant deleted on any replica (revoked, a refresh
 * token reused, the key refused) is refused on every replica within that bound (docs/oauth.md).
 * A revocation on this replica takes effect here at once (`forgetAll`, through `noticingRevocations`).
 * A token used again past half the bound is checked again in the background, so an active user
 * rarely waits for the store. Only a hash of each token is kept as its name; a failed check is not
 * remembered. Bounded in count; each entry is a few hundred bytes.
 */
import { LRUCache } from "lru-cache";
import type { KeyedStore } from "../../ledger/open-ledger.js";
import { hashId } from "./oauth-sealing.js";

/** The revocation bound across replicas: a token revoked elsewhere is refused here within this. */
export const TOKEN_RECHECK_MS = 5_000;
const MAX_TOKENS = 200_000;

interface Checked<T> {
  value: T;
  /** When the check that found it started (ms). */
  at: number;
}

export class TokenChecks<T extends object> {
  readonly #checked: LRUCache<string, Checked<T>>;
  readonly #running = new Map<string, Promise<T>>();
  /** Bumped by `forgetAll`: a check that started before it is not remembered. */
  #epoch = 0;

  constructor(readonly boundMs = TOKEN_RECHECK_MS) {
    this.#checked = new LRUCache({ max: MAX_TOKENS, ttl: boundMs });
  }

  /** What `check` finds for `token`, from a check started less than `boundMs` ago when there is one. */
  async find(token: string, check: (token: string) => Promise<T>): Promise<T> {
    const id = hashId(token);
    const hit = this.#checked.get(id);
    const age = hit === undefined ? Number.POSITIVE_INFINITY : Date.now() - hit.at;
    if (hit !== undefined && age < this.boundMs) {
      if (age > this.boundMs / 2) this.#check(id, token, check).catch(() => undefined);
      return hit.value;
    }
    return this.#check(id, token, check);
  }

  /** A token, grant or account was deleted on this replica: nothing checked before counts. */
  forgetAll(): void {
    this.#epoch++;
    this.#checked.clear();
    // A check still running may have read the store before the deletion: no later call joins it.
    this.#running.clear();
  }

  #check(id: string, token: string, check: (token: string) => Promise<T>): Promise<T> {
    const running = this.#running.get(id);
    if (running !== undefined) return running;
    const at = Date.now();
    const epoch = this.#epoch;
    const p = check(token).then(
      (value) => {
        if (epoch === this.#epoch)
          this.#checked.set(id, { value, at }, { ttl: this.boundMs - (Date.now() - at) });
        return value;
      },
      (error: unknown) => {
        this.#checked.delete(id);
        throw error;
      },
    );
    this.#running.set(id, p);
    const done = () => {
      if (this.#running.get(id) === p) this.#running.delete(id);
    };
    p.then(done, done);
    return p;
  }
}

/** Store keys whose deletion revokes tokens: an access token, a grant, an account (oauth-adapter.ts, oauth-accounts.ts). */
const REVOKING = ["oauth:AccessToken:", "oauth:Grant:", "oauth:account:"];

/** `kv`, telling `revoked` after each deletion that revokes tokens (before the deletion returns). */
export function noticingRevocations(kv: KeyedStore, revoked: () => void): KeyedStore {
  return {
    get: (key) => kv.get(key),
    put: (key, value, ttlMs, o) => kv.put(key, value, ttlMs, o),
    swap: (key, expected, next, ttlMs, o) => kv.swap(key, expected, next, ttlMs, o),
    count: (key, points, windowMs) => kv.count(key, points, windowMs),
    sweep: (now) => kv.sweep(now),
    async delete(key, o) {
      await kv.delete(key, o);
      if (REVOKING.some((prefix) => key.startsWith(prefix))) revoked();
    },
  };
}
