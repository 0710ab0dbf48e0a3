/**
 * A batch's one ceiling divided among its items (generate_batch, batch-call.ts): each item is sent
 * with its own `maxGems`, and the service refuses an item quoted above it rather than spend it, so
 * the sum of the items' ceilings is the most the whole batch can ever spend. The rules:
 * - the sum of the shares never exceeds the total (the batch's maxGems, the threshold, or the
 *   amount the user accepted);
 * - items with an estimate share the total in proportion to their estimates; when some items have
 *   none, the estimated ones get at most their estimate (scaled down if they alone pass the total)
 *   and the others an equal share of the rest;
 * - no share is above the operator's per-request cap (GENERATION_MAX_GEMS), the endpoint's limit,
 *   or the item's own maxGems;
 * - a share rounds down to whole Gems; what rounding leaves goes, one Gem each, to the first items.
 * Without a total (no threshold, no maxGems), each item gets the cap, or none.
 */

export interface ShareItem {
  /** The catalog's estimate for the item, if it has one. */
  estimate: number | undefined;
  /** The item's own maxGems, if its arguments named one. */
  given: number | undefined;
}

export interface ShareLimits {
  /** The whole batch's ceiling; undefined: none. */
  total: number | undefined;
  /** The operator's per-request cap (GENERATION_MAX_GEMS); undefined: none. */
  cap: number | undefined;
  /** The endpoint's highest maxGems. */
  limit: number;
}

const lowest = (...xs: (number | undefined)[]): number | undefined => {
  const known = xs.filter((x): x is number => x !== undefined);
  return known.length === 0 ? undefined : Math.min(...known);
};

/** Each item's maxGems, in order (undefined: sent without one, only where there is no total and no cap). */
export function divideCeiling(items: readonly ShareItem[], o: ShareLimits): (number | undefined)[] {
  const bound = (i: number): number => lowest(items[i]?.given, o.cap, o.limit) ?? o.limit;
  if (o.total === undefined) return items.map((it) => lowest(it.given, o.cap));
  const total = Math.max(0, Math.floor(o.total));
  const raw = rawShares(items, total);
  const shares = raw.map((r, i) => Math.min(Math.floor(r), bound(i)));
  // Rounding leftovers, one Gem at a time, to items still under their bound and their raw share's ceiling.
  let left = total - shares.reduce((a, b) => a + b, 0);
  for (let i = 0; i < shares.length && left > 0; i++) {
    const s = shares[i] ?? 0;
    if (s < bound(i) && s < Math.ceil(raw[i] ?? 0)) {
      shares[i] = s + 1;
      left--;
    }
  }
  return shares;
}

/** Unrounded shares of `total` whose sum is at most `total`. */
function rawShares(items: readonly ShareItem[], total: number): number[] {
  const estimated = items.filter((it) => it.estimate !== undefined);
  const sumEst = estimated.reduce((a, it) => a + (it.estimate ?? 0), 0);
  const unknown = items.length - estimated.length;
  if (unknown === 0) {
    // All estimated: the whole total, in proportion (equal shares where every estimate is 0).
    return items.map((it) => (sumEst > 0 ? (total * (it.estimate ?? 0)) / sumEst : total / items.length));
  }
  // Estimated items take at most their estimate; the rest goes equally to the others.
  const scale = sumEst > total ? total / sumEst : 1;
  const rest = total - sumEst * scale;
  return items.map((it) => (it.estimate === undefined ? rest / unknown : it.estimate * scale));
}
