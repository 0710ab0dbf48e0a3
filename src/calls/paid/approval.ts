/**
 * Approval without a dialog: where the host cannot ask its user (no elicitation, or a question
 * left unanswered), a call above GENERATION_CONFIRM_ABOVE_GEMS sends nothing and answers a quote
 * carrying a token; the same call with `approval: <token>` is then sent with `maxGems` at most the
 * amount quoted (spending.ts). The token is `<payload>.<mac>`:
 * - the payload (base64url JSON, readable, nothing secret): the tool, the amount, the expiry, a
 *   nonce, and short tags of the arguments and the key, so a refusal can say which did not match;
 * - the MAC: HMAC-SHA256 over the key hash, the tool, the canonical arguments' digest (the
 *   `approval` argument itself left out), the amount, the expiry and the nonce.
 * The MAC secret is the same on every replica: derived from GENERATION_AUTH_SECRET when set
 * (Engine.approvalKey), else a random secret kept in the ledger's keyed store, made once by
 * whichever process comes first (put-if-absent). A token is single-use across replicas: its nonce
 * is consumed with put-if-absent in the same store (src/ledger/keyed-store.ts) just before sending.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { canonicalJson } from "../../client/requests.js";
import { APPROVAL_TTL_MS } from "../../config/time-limits.js";
import type { KeyedStore } from "../../ledger/keyed-store.js";
import type { Engine } from "../../mcp/context.js";
import { ArgumentError } from "../../shared/local-refusals.js";

/** Where the per-store secret lives, and how long it is kept (it is made once, never rotated). */
const SECRET_KEY = "approval:secret";
const SECRET_TTL_MS = 100 * 365 * 24 * 60 * 60 * 1000;
/** Where a used token's nonce is kept, until well after the token expired. */
const usedKey = (nonce: string) => `approval:used:${nonce}`;

interface Payload {
  /** tool */
  t: string;
  /** amount in Gems */
  g: number;
  /** expiry, epoch ms */
  e: number;
  /** nonce */
  n: string;
  /** arguments' tag (first 12 hex of their digest) */
  a: string;
  /** key's tag (first 8 hex of an HMAC of the key hash) */
  k: string;
}

/** What an approval binds: the engine's key, the tool and its arguments without `approval`. */
export interface ApprovalScope {
  tool: string;
  args: Record<string, unknown>;
}

/** The arguments as an approval binds them: `approval` left out, canonical JSON, SHA-256. */
export function boundDigest(args: Record<string, unknown>): string {
  const { approval: _left, ...rest } = args;
  return createHash("sha256").update(canonicalJson(rest)).digest("hex");
}

const secrets = new WeakMap<object, Promise<Buffer>>();

/** The MAC secret: from GENERATION_AUTH_SECRET (approvalKey) when set, else the store's own. */
function macSecret(engine: Engine): Promise<Buffer> {
  if (engine.approvalKey !== undefined) return Promise.resolve(Buffer.from(engine.approvalKey));
  let secret = secrets.get(engine.ledger);
  if (secret === undefined) {
    secret = engine.ledger.keyed().then(storeSecret);
    // A failed read is not kept: the next call tries the store again.
    secret.catch(() => secrets.delete(engine.ledger));
    secrets.set(engine.ledger, secret);
  }
  return secret;
}

/** The store's random secret: the first process to need it writes it, every other one reads it. */
async function storeSecret(kv: KeyedStore): Promise<Buffer> {
  const made = randomBytes(32).toString("base64");
  await kv.swap(SECRET_KEY, undefined, made, SECRET_TTL_MS);
  const stored = await kv.get(SECRET_KEY);
  if (stored === undefined) throw new Error("the approval secret could not be kept in the ledger's store");
  return Buffer.from(stored, "base64");
}

const b64 = (s: string) => Buffer.from(s).toString("base64url");

function mac(secret: Buffer, keyHash: string, digest: string, p: Payload): Buffer {
  const fields = [keyHash, p.t, digest, String(p.g), String(p.e), p.n];
  return createHmac("sha256", secret).update(fields.join("\n")).digest();
}

const keyTag = (secret: Buffer, keyHash: string): string =>
  createHmac("sha256", secret).update(`key\n${keyHash}`).digest("hex").slice(0, 8);

/** A token for `gems` on this call (the engine's key, `scope.tool`, `scope.args`), good for 15 minutes. */
export async function mintApproval(
  engine: Engine,
  scope: ApprovalScope,
  gems: number,
): Promise<{ token: string; gems: number; expiresAt: string }> {
  const secret = await macSecret(engine);
  const digest = boundDigest(scope.args);
  const payload: Payload = {
    t: scope.tool,
    g: gems,
    e: Date.now() + APPROVAL_TTL_MS,
    n: randomBytes(12).toString("base64url"),
    a: digest.slice(0, 12),
    k: keyTag(secret, engine.keyHash),
  };
  const token = `${b64(JSON.stringify(payload))}.${mac(secret, engine.keyHash, digest, payload).toString("base64url")}`;
  return { token, gems, expiresAt: new Date(payload.e).toISOString() };
}

const refuse = (why: string): never => {
  throw new ArgumentError(
    "approval",
    `${why}; nothing was sent. An approval counts once, for the exact call it was quoted for (same tool, same arguments, same key), within 15 minutes: call again without approval for a new quote`,
  );
};

/** Far above any token this server issues (about 200 characters). */
const TOKEN_MAX = 512;

function readPayload(token: string): { payload: Payload; given: Buffer } {
  if (token.length > TOKEN_MAX)
    refuse(`longer than the ${TOKEN_MAX} characters of any token this server issues`);
  const [head, sig, extra] = token.split(".");
  if (head === undefined || sig === undefined || extra !== undefined)
    return refuse("not a token this server issued");
  try {
    const p = JSON.parse(Buffer.from(head, "base64url").toString("utf8")) as Partial<Payload>;
    const ok =
      typeof p.t === "string" &&
      typeof p.g === "number" &&
      Number.isInteger(p.g) &&
      p.g >= 0 &&
      typeof p.e === "number" &&
      typeof p.n === "string" &&
      typeof p.a === "string" &&
      typeof p.k === "string";
    if (ok) return { payload: p as Payload, given: Buffer.from(sig, "base64url") };
  } catch {
    // Not JSON: refused below.
  }
  return refuse("not a token this server issued");
}

/**
 * The amount `token` approves for this very call, checked (MAC, key, tool, arguments, expiry)
 * without using it up; refuses, naming why, a token that does not match.
 */
export async function checkApproval(engine: Engine, scope: ApprovalScope, token: string): Promise<Approved> {
  const { payload: p, given } = readPayload(token);
  const secret = await macSecret(engine);
  const digest = boundDigest(scope.args);
  const expected = mac(secret, engine.keyHash, digest, p);
  const genuine = given.length === expected.length && timingSafeEqual(given, expected);
  if (!genuine) {
    if (p.k !== keyTag(secret, engine.keyHash)) refuse("this approval was issued to another API key");
    if (p.t !== scope.tool) refuse(`this approval is for ${p.t}, not ${scope.tool}`);
    if (p.a !== digest.slice(0, 12))
      refuse("the arguments differ from the ones this approval was quoted for");
    refuse("the token does not verify (altered or forged)");
  }
  if (Date.now() >= p.e) refuse(`this approval expired at ${new Date(p.e).toISOString()}`);
  return { gems: p.g, nonce: p.n, expires: p.e };
}

export interface Approved {
  gems: number;
  nonce: string;
  expires: number;
}

/**
 * Uses the approval up, atomically across every process on the store: true the first time, a
 * refusal after (nothing sent). Called once everything else was checked, just before the claim.
 */
export async function consumeApproval(engine: Engine, approved: Approved): Promise<void> {
  const kv = await engine.ledger.keyed();
  const keep = Math.max(approved.expires - Date.now(), 0) + APPROVAL_TTL_MS;
  const first = await kv.swap(usedKey(approved.nonce), undefined, "used", keep);
  if (!first) {
    refuse(
      "this approval was already used (an approval counts for one call; list_requests shows that call's identity and task)",
    );
  }
}
