/** How tests check a refusal of bad input: an ArgumentError naming the field, and what it says. */
import { expect } from "vitest";
import { ArgumentError } from "../../src/shared/local-refusals.js";

/** Runs `fn`, expects it to throw an ArgumentError for `field` whose message matches each of `says`; returns it. */
export function refusedArgument(fn: () => unknown, field: string, ...says: RegExp[]): ArgumentError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err, `expected ${field} to be refused`).toBeInstanceOf(ArgumentError);
  const refusal = err as ArgumentError;
  expect(refusal.field).toBe(field);
  expect(refusal.code).toBe("INVALID_ARGUMENT");
  for (const s of says) expect(refusal.message).toMatch(s);
  return refusal;
}
