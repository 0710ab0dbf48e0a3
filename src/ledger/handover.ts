/**
 * Answers on their way to the client. Between a result leaving a call and its transport saying
 * whether the client got it, the record reads "not delivered" though the answer may already be
 * there: an identical call deciding then would replay the result instead of making new work, and
 * a listing would say "not delivered" (docs/idempotency.md#delivery). So a result
 * handed over is held open here until it settles, and whoever would read its mark waits for it
 * first, for at most DELIVERY_MARK_WAIT_MS (a transport that never says is treated as "not yet").
 */
import { waitAtMost } from "../client/deadline.js";
import { DELIVERY_MARK_WAIT_MS } from "../config/time-limits.js";
import type { DeliveryMark } from "./ledger-types.js";

interface Open {
  keyHash: string;
  keys: readonly string[];
  done: Promise<void>;
}

/** What an identical call is recognised by: the same body of the same tool, or the same identity. */
export const bodyKey = (keyHash: string, tool: string, bodyHash: string): string =>
  `body\u0000${keyHash}\u0000${tool}\u0000${bodyHash}`;
export const identityKey = (keyHash: string, identity: string): string =>
  `id\u0000${keyHash}\u0000${identity}`;

export class Handovers {
  readonly #open = new Set<Open>();
  readonly #waitMs: number;

  constructor(waitMs = DELIVERY_MARK_WAIT_MS) {
    this.#waitMs = waitMs;
  }

  /** Holds `keys` open until the mark settles; `mark(true)` writes the delivered mark first. */
  open(keyHash: string, keys: readonly string[], mark: (delivered: boolean) => Promise<void>): DeliveryMark {
    let resolve = () => {};
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const entry: Open = { keyHash, keys, done };
    this.#open.add(entry);
    let settling: Promise<void> | undefined;
    return {
      settle: (delivered) => {
        settling ??= mark(delivered)
          .catch(() => {
            // Left undelivered, an identical call replays this identity: the safe side.
          })
          .finally(() => {
            this.#open.delete(entry);
            resolve();
          });
        return settling;
      },
    };
  }

  /** Whether anything matching `keys` is on its way (so a caller need not wait at all otherwise). */
  pending(keys: readonly string[]): boolean {
    for (const e of this.#open) if (e.keys.some((k) => keys.includes(k))) return true;
    return false;
  }

  /** Waits for the open handovers matching `keys` to settle (at most the wait limit). */
  forKeys(keys: readonly string[]): Promise<void> {
    return this.#wait((e) => e.keys.some((k) => keys.includes(k)));
  }

  /** Waits for every open handover of one API key (a listing). */
  forKeyHash(keyHash: string): Promise<void> {
    return this.#wait((e) => e.keyHash === keyHash);
  }

  async #wait(match: (e: Open) => boolean): Promise<void> {
    const pending = [...this.#open].filter(match).map((e) => e.done);
    if (pending.length === 0) return;
    await waitAtMost(Promise.all(pending), this.#waitMs);
  }
}
