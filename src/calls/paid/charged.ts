/**
 * What a chat or extraction result says about Gems. The service settles text and extraction on
 * measured usage, never above the reservation (docs/service.md#spending), and its
 * responses name token counts, not Gems; a Gem figure is shown only where a response carries one.
 */

/** The first numeric member whose name speaks of Gems, searched one level deep. */
function gemsIn(value: unknown, depth = 0): { name: string; gems: number } | undefined {
  if (value === null || typeof value !== "object" || depth > 1) return undefined;
  for (const [name, member] of Object.entries(value)) {
    if (typeof member === "number" && /gems?/i.test(name)) return { name, gems: member };
  }
  for (const member of Object.values(value)) {
    const found = gemsIn(member, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** One sentence on the Gems charged, for a text or extraction result. */
export function chargedText(response: unknown, ceiling: number | undefined, reused: boolean): string {
  if (reused) return "Gems: none charged by this call (a replay of the retained result).";
  const found = gemsIn(response);
  if (found) return `Gems: ${found.gems} (${found.name}, as the service reports it).`;
  const bound = ceiling === undefined ? "the service's reservation" : `maxGems ${ceiling}`;
  return `Gems: not shown by the service; it settles on measured usage, never above ${bound}.`;
}
