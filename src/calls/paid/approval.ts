/**
 * Approval without a dialog: where the host cannot ask its user (no elicitation, or a question
 * left unanswered), a call above GENERATION_CONFIRM_ABOVE_GEMS sends nothing and answers a quote
 * carrying a token; the same call with `approval: <token>` is then sent with `maxGems` at most the
 * amount quoted (spending.ts). The token is a JWT (jose, HS256; no format of our own):
 * - its claims (readable, nothing secret): the tool, the amount, the expiry, a nonce (`jti`), and
 *   short tags of the arguments and the key, so a refusal can say which did not match;
 * - its signing key: HMAC-SHA256 of the secret over the key hash, the tool and the canonical
 *   arguments' digest (the `approval` argument itself left out), so the token verifies only for
 *   that key, tool and arguments, without naming them; the amount and expiry are signed claims.
 * The MAC secret is the same on every replica: derived from GENERATION_AUTH_SECRET when set
 * (Engine.approvalKey), else a random secret kept in the ledger's keyed store, made once by
 * whichever process comes first (put-if-absent). A token is single-use across replicas: its nonce
 * is consumed with put-if-absent in the same store (src/ledger/keyed-store.ts) just before sending.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { errors, jwtVerify, SignJWT } from "jose";
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

/** The token's claims besides `exp` and `jti`. */
interface Claims {
  /** tool */
  tool: string;
  /** amount in Gems */
  gems: number;
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

/** The signing key of one call's token: only that key, tool and those arguments derive it. */
function signingKey(secret: Buffer, keyHash: string, tool: string, digest: string): Uint8Array {
  return createHmac("sha256", secret).update([keyHash, tool, digest].join("\n")).digest();
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
  const expires = Date.now() + APPROVAL_TTL_MS;
  const claims: Claims = {
    tool: scope.tool,
    gems,
    a: digest.slice(0, 12),
    k: keyTag(secret, engine.keyHash),
  };
  const token = await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: "HS256" })
    .setJti(randomBytes(12).toString("base64url"))
    .setExpirationTime(Math.floor(expires / 1000))
    .sign(signingKey(secret, engine.keyHash, scope.tool, digest));
  return { token, gems, expiresAt: new Date(Math.floor(expires / 1000) * 1000).toISOString() };
}

const refuse = (why: string): never => {
  throw new ArgumentError(
    "approval",
    `${why}; nothing was sent. An approval counts once, for the exact call it was quoted for (same tool, same arguments, same key), within 15 minutes: call again without approval for a new quote`,
  );
};

/** Far above any token this server issues (about 200 characters). */
const TOKEN_MAX = 512;

/** The claims as written, unverified: only to say why a token that does not verify is refused. */
function readClaims(token: string): Partial<Claims> & { exp?: number; jti?: string } {
  if (token.length > TOKEN_MAX)
    refuse(`longer than the ${TOKEN_MAX} characters of any token this server issues`);
  const parts = token.split(".");
  const body = parts[1];
  if (parts.length !== 3 || body === undefined) return refuse("not a token this server issued");
  try {
    const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as unknown;
    if (claims !== null && typeof claims === "object") return claims as Partial<Claims>;
  } catch {
    // Not JSON: refused below.
  }
  return refuse("not a token this server issued");
}

/**
 * The amount `token` approves for this very call, checked (signature, key, tool, arguments,
 * expiry) without using it up; refuses, naming why, a token that does not match.
 */
export async function checkApproval(engine: Engine, scope: ApprovalScope, token: string): Promise<Approved> {
  const written = readClaims(token);
  const secret = await macSecret(engine);
  const digest = boundDigest(scope.args);
  try {
    const { payload } = await jwtVerify(token, signingKey(secret, engine.keyHash, scope.tool, digest), {
      algorithms: ["HS256"],
      requiredClaims: ["exp", "jti"],
    });
    const gems = payload.gems;
    if (typeof gems !== "number" || !Number.isInteger(gems) || gems < 0 || typeof payload.jti !== "string")
      return refuse("not a token this server issued");
    return { gems, nonce: payload.jti, expires: (payload.exp ?? 0) * 1000 };
  } catch (err) {
    if (err instanceof errors.JWTExpired)
      refuse(`this approval expired at ${new Date((written.exp ?? 0) * 1000).toISOString()}`);
    if (written.k !== keyTag(secret, engine.keyHash)) refuse("this approval was issued to another API key");
    if (written.tool !== scope.tool)
      refuse(`this approval is for ${String(written.tool)}, not ${scope.tool}`);
    if (written.a !== digest.slice(0, 12))
      refuse("the arguments differ from the ones this approval was quoted for");
    return refuse("the token does not verify (altered or forged)");
  }
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
