/**
 * Refusals this server decides itself rather than the service: a bad argument (ArgumentError,
 * thrown from the service client's own checks up to the tools), and the refusals of the top rooms
 * (src/mcp/refusals.ts: the user said no, a save that is not allowed or failed). Each has its code
 * and its next action.
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
