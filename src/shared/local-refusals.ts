/**
 * Refusals this server decides itself rather than the service, each with its code and next action:
 * a bad argument (ArgumentError, thrown from the service client's own checks up to the tools), and
 * the base of the top rooms' own (the user said no: src/mcp/questions.ts; a save not allowed or
 * failed: src/calls/files/save-refusals.ts).
 */
import { CodedError } from "./coded-error.js";

export class LocalRefusal extends CodedError {
  override readonly name: string = "LocalRefusal";
  constructor(
    readonly code: string,
    message: string,
    readonly action: string,
  ) {
    super(message);
  }
}

/** Refused locally: nothing was sent. The message names the field and the limit. */
export class ArgumentError extends LocalRefusal {
  override readonly name = "ArgumentError";
  readonly field: string;
  /** What is wrong with the field, without its name. */
  readonly detail: string;
  constructor(field: string, message: string) {
    super("INVALID_ARGUMENT", `${field}: ${message}`, "Fix the named field; nothing was sent.");
    this.field = field;
    this.detail = message;
  }
}

/**
 * Every argument error of one call, in one refusal (the caller fixes them all at once, rather than
 * one per round): in the order given, one per field (the first said of a field wins), so a check
 * that must come first (an unknown model) is named first. One error stands as it is.
 */
export function allArgumentErrors(errors: readonly ArgumentError[]): ArgumentError {
  const seen = new Set<string>();
  const kept = errors.filter((e) => !seen.has(e.field) && seen.add(e.field));
  const [first, ...rest] = kept;
  if (first === undefined) return new ArgumentError("(input)", "is invalid");
  if (rest.length === 0) return first;
  const more = rest.map((e) => `${e.field}: ${e.detail}`).join("; ");
  return new ArgumentError(first.field, `${first.detail}; and ${more} (${kept.length} errors)`);
}
