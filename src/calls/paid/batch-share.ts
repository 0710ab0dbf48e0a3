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
 *   or the item's own maxGems; what such a bound holds back goes to the items it does not hold;
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
  if (o.total === undefined) return items.map((it) => lowest(it.given, o.cap));
  const bounds = items.map((it) => lowest(it.given, o.cap, o.limit) ?? o.limit);
  const total = Math.max(0, Math.floor(o.total));
  const raw = rawShares(items, bounds, total);
  const shares = raw.map((r) => Math.floor(r));
  // Rounding leftovers, one Gem at a time, to the items whose raw share was rounded down.
  let left = total - shares.reduce((a, b) => a + b, 0);
  for (let i = 0; i < shares.length && left > 0; i++) {
    const s = shares[i] ?? 0;
    if (s < (bounds[i] ?? 0) && s < Math.ceil(raw[i] ?? 0)) {
      shares[i] = s + 1;
      left--;
    }
  }
  return shares;
}

/**
 * Unrounded shares of `total` (their sum at most `total`, each within its bound): all estimated, in
 * proportion to the estimates; else the estimated items at most their estimate, the others an equal
 * share of the rest, and what bounds leave over back to the estimated items, in proportion.
 */
function rawShares(items: readonly ShareItem[], bounds: readonly number[], total: number): number[] {
  const shares = items.map(() => 0);
  const estimated = items.flatMap((it, i) => (it.estimate === undefined ? [] : [i]));
  const others = items.flatMap((it, i) => (it.estimate === undefined ? [i] : []));
  const weight = (i: number): number => items[i]?.estimate ?? 0;
  if (others.length === 0) return fill(shares, estimated, weight, bounds, total);
  const sumEst = estimated.reduce((a, i) => a + weight(i), 0);
  const scale = sumEst > total ? total / sumEst : 1;
  for (const i of estimated) shares[i] = Math.min(weight(i) * scale, bounds[i] ?? 0);
  const used = shares.reduce((a, b) => a + b, 0);
  fill(shares, others, () => 1, bounds, total - used);
  const left = total - shares.reduce((a, b) => a + b, 0);
  return fill(shares, estimated, weight, bounds, left);
}

/**
 * Adds `amount` to the shares of `among`, in proportion to their weights (equally where every
 * weight is 0), none past its bound; what a bounded item cannot take goes to the others.
 */
function fill(
  shares: number[],
  among: readonly number[],
  weight: (i: number) => number,
  bounds: readonly number[],
  amount: number,
): number[] {
  let open = among.filter((i) => (shares[i] ?? 0) < (bounds[i] ?? 0));
  let left = amount;
  while (open.length > 0 && left > 1e-9) {
    const sum = open.reduce((a, i) => a + weight(i), 0);
    const w = (i: number): number => (sum > 0 ? weight(i) / sum : 1 / open.length);
    const full = open.filter((i) => (shares[i] ?? 0) + left * w(i) >= (bounds[i] ?? 0));
    if (full.length === 0) {
      for (const i of open) shares[i] = (shares[i] ?? 0) + left * w(i);
      break;
    }
    for (const i of full) {
      left -= (bounds[i] ?? 0) - (shares[i] ?? 0);
      shares[i] = bounds[i] ?? 0;
    }
    open = open.filter((i) => !full.includes(i));
  }
  return shares;
}
