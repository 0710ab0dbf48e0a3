/** What a record keeps of an error (`lastError`, `closedReason`): bounded, and never the key. */
import { type Scrub, scrubKeyShapes } from "../shared/scrub.js";

export interface ErrorSummary {
  status?: number;
  code: string;
  message: string;
}

const MAX_MESSAGE = 500;

/**
 * Keeps what `list_requests` needs from an error; messages are bounded. The service may echo the
 * key in a message, and the ledger knows only its hash: `scrub`, from the caller who holds the key,
 * removes it before anything is stored (key shapes are removed in any case).
 */
export function summarize(err: unknown, scrub: Scrub = scrubKeyShapes): ErrorSummary {
  const e = err as { status?: unknown; code?: unknown; name?: unknown; message?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : typeof e?.name === "string" ? e.name : "UNKNOWN_ERROR";
  const message = typeof e?.message === "string" ? e.message : String(err);
  const clean = (text: string) => scrubKeyShapes(scrub(text));
  // Scrubbed whole, then cut: a cut first could leave part of a key no pattern recognises.
  const out: ErrorSummary = { code: clean(code), message: clean(message).slice(0, MAX_MESSAGE) };
  if (typeof e?.status === "number") out.status = e.status;
  return out;
}
