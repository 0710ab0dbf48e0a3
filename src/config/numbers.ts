/**
 * Numeric settings, read one way: a value that is a plain number (digits, a sign, a fraction) is
 * shown in its refusal ("-5 is below 0", "900 is above 600"), since it says what to fix and no
 * key fits it (a key is 64 hex digits); anything else is refused without its value, which might
 * be a pasted secret.
 */

export interface NumberRange {
  min: number;
  max: number;
  /** Whole numbers only (a port, Gems, milliseconds). */
  integer: boolean;
  /** What is expected, for the refusal: "expected an integer from 0 to 65535". */
  expected: string;
}

/** A value safe to show in a refusal: a plain number, short. */
export function shownNumber(value: string): string | undefined {
  return /^[-+]?\d{1,12}(\.\d{1,6})?$/.test(value) ? value : undefined;
}

/** The number `value` names within `range`, or the problem with it, one clause, safe to print. */
export function numberIn(value: string, range: NumberRange): { value: number } | { problem: string } {
  const shown = shownNumber(value);
  if (shown === undefined) return { problem: `${range.expected} (value not shown)` };
  // `+ 0` turns -0 into 0.
  const n = Number(value) + 0;
  if (range.integer && !Number.isInteger(n))
    return { problem: `${shown} is not a whole number; ${range.expected}` };
  if (n < range.min) return { problem: `${shown} is below ${range.min}; ${range.expected}` };
  if (n > range.max) return { problem: `${shown} is above ${range.max}; ${range.expected}` };
  return { value: n };
}
