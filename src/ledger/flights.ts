/**
 * Identical calls in flight in this process share one attempt (the claim makes it safe across
 * processes): the first leads, the others join it. A joiner's own abort stops only its wait, and
 * its answer then carries the leader's identity, which replays the same request; if the leader's
 * caller aborted, the joiner resumes the same record itself rather than inherit that abort.
 */

import { IdentifiedError } from "./ledger-errors.js";
import type { RunResult } from "./ledger-types.js";

interface Flight<T> {
  promise: Promise<RunResult<T>>;
  signal: AbortSignal | undefined;
  /** The identity once claimed (undefined if the claim failed): a joiner's answers carry it. */
  identity: Promise<string | undefined>;
  /** How many calls joined so far: each joiner learns its place (RunResult.joinOrder). */
  joiners: number;
}

export class Flights {
  readonly #inflight = new Map<string, Flight<unknown>>();

  /**
   * Joins the flight under `key`, or leads a new one: `lead` gets a callback to say which identity
   * it claimed; `rerun` starts over when the leader's caller aborted. A joiner learns the leader's
   * identity through `onClaimed` as soon as it is claimed.
   */
  fly<T>(
    key: string,
    signal: AbortSignal | undefined,
    lead: (claimed: (identity: string) => void) => Promise<RunResult<T>>,
    rerun: () => Promise<RunResult<T>>,
    onClaimed?: (identity: string) => void,
  ): Promise<RunResult<T>> {
    const pending = this.#inflight.get(key) as Flight<T> | undefined;
    if (pending !== undefined) {
      if (onClaimed !== undefined) void pending.identity.then((id) => id !== undefined && onClaimed(id));
      return join(pending, signal, rerun);
    }
    let claimed: (identity: string | undefined) => void = () => {};
    const identity = new Promise<string | undefined>((resolve) => {
      claimed = resolve;
    });
    const promise = lead(claimed).finally(() => {
      claimed(undefined);
      this.#inflight.delete(key);
    });
    this.#inflight.set(key, { promise, signal, identity, joiners: 0 });
    return promise;
  }
}

async function join<T>(
  leader: Flight<T>,
  own: AbortSignal | undefined,
  rerun: () => Promise<RunResult<T>>,
): Promise<RunResult<T>> {
  const joinOrder = ++leader.joiners;
  let onAbort = () => {};
  const stop =
    own === undefined
      ? undefined
      : new Promise<never>((_, reject) => {
          onAbort = () => reject(own.reason);
          if (own.aborted) onAbort();
          else own.addEventListener("abort", onAbort, { once: true });
        });
  stop?.catch(() => {});
  try {
    const r = await (stop === undefined ? leader.promise : Promise.race([leader.promise, stop]));
    return { ...r, reused: true, joined: true, joinOrder };
  } catch (err) {
    if (leader.signal?.aborted && !own?.aborted) return rerun();
    if (own?.aborted && !(err instanceof IdentifiedError)) {
      // This call's own budget ran out first: the leader's claimed identity replays the request.
      const identity = await leader.identity;
      if (identity !== undefined) throw new IdentifiedError(err, identity, "sent");
    }
    throw err;
  } finally {
    own?.removeEventListener("abort", onAbort);
  }
}
