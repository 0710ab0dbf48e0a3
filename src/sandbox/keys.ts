/**
 * Keys, scopes and Gems. Every spend is a reservation that settles at a known sandbox time
 * (media at task end, text and extraction at once), so balances are computed from timestamps
 * and reading them changes nothing a caller can see (settled spends are summed once: `Spends`).
 *
 * Cap rule (docs/service.md#spending): completed charges in the current UTC month plus all
 * outstanding reservations, whatever month they were made in, must leave room for a new one.
 */
import { createHash, randomBytes } from "node:crypto";
import { LIMITS } from "../config/service-limits.js";
import { gems } from "../shared/wording.js";
import { utcMonth } from "./clock.js";
import { Refusal } from "./sandbox-errors.js";

export type Scope = "read" | "generate";

export interface Spend {
  quoted: number;
  charged: number;
  /** Sandbox time at which the reservation settles into `charged` + released. */
  settleAt: number;
}

export interface KeyRecord {
  /** Internal owner id; never the secret. */
  id: string;
  scopes: ReadonlySet<Scope>;
  capGems: number;
  balanceGems: number;
  spends: Spends;
}

export interface KeyUsage {
  chargedThisMonth: number;
  outstanding: number;
  chargedTotal: number;
}

export class KeyStore {
  private readonly bySecret = new Map<string, KeyRecord>();
  private n = 0;

  add(o: { secret?: string; scopes?: Scope[]; capGems?: number; balanceGems?: number }): string {
    const secret = o.secret ?? `lgk_${randomBytes(32).toString("hex")}`;
    if (!LIMITS.apiKeyPattern.test(secret)) throw new Error("sandbox keys must match lgk_ + 64 hex");
    this.bySecret.set(secret, {
      id: `owner_${++this.n}_${createHash("sha256").update(secret).digest("hex").slice(0, 8)}`,
      scopes: new Set(o.scopes ?? ["read", "generate"]),
      capGems: o.capGems ?? 100_000,
      balanceGems: o.balanceGems ?? 1_000_000,
      spends: new Spends(),
    });
    return secret;
  }

  /** 401 for a missing, malformed or unknown bearer key. */
  authenticate(header: string | null): KeyRecord {
    const m = /^Bearer (\S+)$/.exec(header ?? "");
    const key = m?.[1] && LIMITS.apiKeyPattern.test(m[1]) ? this.bySecret.get(m[1]) : undefined;
    if (!key) {
      throw new Refusal(
        401,
        "INVALID_API_KEY",
        header ? "The API key is malformed, revoked or unknown." : "Missing bearer API key.",
      );
    }
    return key;
  }

  revoke(secret: string): boolean {
    return this.bySecret.delete(secret);
  }
}

export function requireScope(key: KeyRecord, scope: Scope): void {
  if (!key.scopes.has(scope)) {
    throw new Refusal(403, "INSUFFICIENT_SCOPE", `This key lacks the \`${scope}\` scope.`);
  }
}

export function usage(key: KeyRecord, now: number): KeyUsage {
  return key.spends.usage(now);
}

/**
 * A key's spends. Those settled by the latest time asked about are summed once (in all, and by
 * UTC month), so a submission costs the same after thousands of earlier ones: only the spends
 * still outstanding are looked at again. Sandbox time only moves forward; should an injected
 * clock go back, every spend is summed afresh.
 */
export class Spends {
  readonly #all: Spend[] = [];
  #open: Spend[] = [];
  #foldedTo = Number.NEGATIVE_INFINITY;
  #total = 0;
  readonly #byMonth = new Map<string, number>();

  add(spend: Spend): void {
    this.#all.push(spend);
    if (spend.settleAt <= this.#foldedTo) this.#fold(spend);
    else this.#open.push(spend);
  }

  usage(now: number): KeyUsage {
    if (now < this.#foldedTo) return sum(this.#all, now);
    this.#foldedTo = now;
    const open: Spend[] = [];
    let outstanding = 0;
    for (const s of this.#open) {
      if (s.settleAt <= now) this.#fold(s);
      else {
        open.push(s);
        outstanding += s.quoted;
      }
    }
    this.#open = open;
    return {
      chargedThisMonth: this.#byMonth.get(utcMonth(now)) ?? 0,
      outstanding,
      chargedTotal: this.#total,
    };
  }

  #fold(s: Spend): void {
    this.#total += s.charged;
    const month = utcMonth(s.settleAt);
    this.#byMonth.set(month, (this.#byMonth.get(month) ?? 0) + s.charged);
  }
}

/** Every spend summed at `now`: what `Spends` keeps folded, computed from scratch. */
function sum(spends: readonly Spend[], now: number): KeyUsage {
  const month = utcMonth(now);
  let chargedThisMonth = 0;
  let outstanding = 0;
  let chargedTotal = 0;
  for (const s of spends) {
    if (s.settleAt <= now) {
      chargedTotal += s.charged;
      if (utcMonth(s.settleAt) === month) chargedThisMonth += s.charged;
    } else outstanding += s.quoted;
  }
  return { chargedThisMonth, outstanding, chargedTotal };
}

/**
 * Admits a reservation of `amount` Gems or refuses it: 409 PRICE_CHANGED above the request's
 * maxGems, 402 API_KEY_LIMIT past the monthly cap, 402 INSUFFICIENT_BALANCE past the balance.
 */
export function admit(key: KeyRecord, amount: number, maxGems: number | undefined, now: number): void {
  if (maxGems !== undefined && amount > maxGems) {
    throw new Refusal(
      409,
      "PRICE_CHANGED",
      `The quote is ${gems(amount)}, above maxGems ${maxGems}. Approve a higher maxGems to proceed.`,
    );
  }
  const u = usage(key, now);
  if (u.chargedThisMonth + u.outstanding + amount > key.capGems) {
    throw new Refusal(
      402,
      "API_KEY_LIMIT",
      `The key's monthly cap of ${gems(key.capGems)} cannot cover a reservation of ${gems(amount)} ` +
        `(${u.chargedThisMonth} charged this month, ${u.outstanding} reserved).`,
    );
  }
  if (u.chargedTotal + u.outstanding + amount > key.balanceGems) {
    throw new Refusal(402, "INSUFFICIENT_BALANCE", `The account balance cannot cover ${gems(amount)}.`);
  }
}
