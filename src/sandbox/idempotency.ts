/**
 * Retained outcomes by (key, identity). One identity belongs to one logical request of one key:
 * the same identity with another route or another canonical body is a conflict; the exact
 * request again returns what was retained, without new work.
 */
import { LIMITS } from "../config/service-limits.js";
import { canonicalJson } from "./body.js";
import { invalid, Refusal } from "./sandbox-errors.js";

export type Retained =
  | { kind: "task"; taskId: string }
  | { kind: "chat"; completion: Record<string, unknown> }
  | { kind: "extraction"; status: number; body: Record<string, unknown> };

interface Entry {
  route: string;
  canonical: string;
  /** Undefined while the first request with this identity is still being worked on. */
  outcome: Retained | undefined;
}

export function requireIdempotencyKey(req: Request): string {
  const value = req.headers.get("idempotency-key");
  if (value === null) throw invalid("Idempotency-Key: header required on submissions.");
  if (!LIMITS.idempotencyKeyPattern.test(value)) {
    throw invalid("Idempotency-Key: must be 1 to 128 characters of letters, digits, `_`, `.`, `:`, `-`.");
  }
  return value;
}

export class IdempotencyStore {
  private readonly entries = new Map<string, Entry>();

  /**
   * The retained outcome for an exact replay, or undefined for new work; 409 IDEMPOTENCY_CONFLICT
   * for a changed request, 409 REQUEST_UNCERTAIN while the same request is still being worked on.
   */
  lookup(ownerId: string, identity: string, route: string, body: unknown): Retained | undefined {
    const e = this.entries.get(`${ownerId}\u0000${identity}`);
    if (!e) return undefined;
    if (e.route !== route || e.canonical !== canonicalJson(body)) {
      throw new Refusal(
        409,
        "IDEMPOTENCY_CONFLICT",
        `Idempotency-Key ${identity} was already used for a different request.`,
      );
    }
    if (!e.outcome) {
      throw new Refusal(
        409,
        "REQUEST_UNCERTAIN",
        `A request with Idempotency-Key ${identity} is still in progress; replay it later.`,
      );
    }
    return e.outcome;
  }

  /**
   * Claims the identity while new work is prepared, so a concurrent replay cannot create it twice.
   * The returned function drops the claim unless an outcome was retained meanwhile.
   */
  hold(ownerId: string, identity: string, route: string, body: unknown): () => void {
    const k = `${ownerId}\u0000${identity}`;
    const entry: Entry = { route, canonical: canonicalJson(body), outcome: undefined };
    this.entries.set(k, entry);
    return () => {
      if (this.entries.get(k) === entry && !entry.outcome) this.entries.delete(k);
    };
  }

  retain(ownerId: string, identity: string, route: string, body: unknown, outcome: Retained): void {
    this.entries.set(`${ownerId}\u0000${identity}`, { route, canonical: canonicalJson(body), outcome });
  }
}
