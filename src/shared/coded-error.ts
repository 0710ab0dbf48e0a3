/**
 * The root of this server's own errors. Each room throws a family of its own under it, and every
 * member says what happened (`code`) and what to do about it (`action`, in the words of the room
 * that threw it; src/mcp/next-steps.ts adds this server's tools and settings on top):
 *
 * - the service's answers and the way to it: ServiceError (service-errors.ts), chosen from a status table;
 * - refusals this server decides itself, before or instead of a request: LocalRefusal
 *   (local-refusals.ts: ArgumentError for a bad argument, whichever room finds it), and each top
 *   room's own where it decides them (the user's no: src/mcp/questions.ts; saves:
 *   src/calls/files/save-refusals.ts);
 * - the ledger's: LedgerFailure (src/ledger/ledger-errors.ts).
 *
 * Whoever turns an error into words (src/mcp/results.ts) tells them apart by these classes, never
 * by the shape of an object.
 */
export abstract class CodedError extends Error {
  /** What happened, in a word the caller can act on: the service's code, or one of ours. */
  abstract readonly code: string;
  /** What to do next, in the words of the room that threw it. */
  abstract readonly action: string;
}
