/**
 * Finds sentences that promise a repeated call costs nothing without saying when that holds. A
 * repeat replays (no second charge) only while the earlier call's outcome is unknown or its result
 * was not delivered; once delivered, an identical call is new work and is charged again
 * (docs/idempotency.md#rules, rules 3 and 7), unless the caller passes its idempotencyKey. A
 * sentence that pairs a free claim with a repeat must carry one of those qualifiers.
 */

/** A claim that something costs nothing (more). */
const FREE =
  /without (a |any )?(second|new|another|extra) charge|no (second|new|extra) charge|without (charging|paying)|(never|not) (be )?(charg|pa)\w* (again|twice)|\bfree\b|nothing new|costs? nothing/i;
/** A repeat of a call. */
const REPEAT =
  /identical|same (arguments|call|part|request|tool|prompt)|\brepeat\w*|\bagain\b|\bresubmit\w*/i;
/**
 * What makes a repeat free: its outcome unknown, or its result not delivered; or the caller passing
 * the earlier request's idempotencyKey, which replays it whatever became of its result.
 */
const QUALIFIED =
  /not (yet )?delivered|never (arrived|reached)|did(n't| not) arrive|in flight|unknown|uncertain|cut off|without a result|\blost\b|idempotencyKey/i;

export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The sentences of `text` that promise a free repeat with no qualifier. */
export function unqualifiedFreeRepeats(text: string): string[] {
  return sentences(text).filter((s) => FREE.test(s) && REPEAT.test(s) && !QUALIFIED.test(s));
}

/** Every `description` in a JSON Schema (or any JSON value), with the property path it sits at. */
export function descriptionsIn(value: unknown, at = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => descriptionsIn(v, `${at}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) =>
    k === "description" && typeof v === "string" ? [`${at}: ${v}`] : descriptionsIn(v, at ? `${at}.${k}` : k),
  );
}
