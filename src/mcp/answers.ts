/**
 * Answers bound to their questions. A question to the user goes out in an input-required result
 * with a `requestState` that names what was asked: the tool, a digest of its exact arguments and
 * each question with its amount in Gems. On 2026-07-28 the client echoes that state with its answer in a
 * new request; 2025-11-25's push round trip (the SDK's legacy shim) passes it back in process. The
 * state is sealed by the SDK's HMAC codec (createRequestStateCodec, verified before the handler
 * runs through `ServerOptions.requestState.verify`), so an answer counts only for the request it
 * was asked about (src/mcp/questions.ts): a missing, forged, expired or foreign state is no answer.
 *
 * The MAC key: derived from GENERATION_AUTH_SECRET when it is set, the same on every replica, so an
 * answer may come back to any of them; otherwise random per process, which serves stdio and one
 * HTTP process (an answer that reaches another process is then asked again, never honoured). Each
 * API key gets its own key derived from it, so a state minted under one key verifies under no other.
 */
import { createHash, hkdfSync, randomBytes } from "node:crypto";
import {
  createRequestStateCodec,
  type RequestStateCodec,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { canonicalJson } from "../client/requests.js";

/** What a requestState carries. Signed, not encrypted (the client can read it): nothing secret. */
export interface AskedState {
  tool: string;
  /** SHA-256 (hex) of the call's arguments as canonical JSON. */
  args: string;
  /** Each question asked, by key, with the amount in Gems it asked about (null: no amount). */
  asked: Record<string, number | null>;
  /** One per round of questions: its answer is honoured once in this process. */
  nonce: string;
}

/** How long a question stays answerable. */
export const ANSWER_TTL_SECONDS = 600;

/** What the verify hook hands the handler for a state that failed verification: no answer. */
const REJECTED = Object.freeze({ rejected: true });

let processKey: Uint8Array | undefined;

/**
 * The base MAC key of this process: from the first GENERATION_AUTH_SECRET (base64) when set, so
 * replicas agree; else 32 random bytes, made once per process.
 */
export function answerKey(secrets: readonly string[] | undefined): Uint8Array {
  const first = secrets?.[0];
  if (first === undefined) {
    processKey ??= new Uint8Array(randomBytes(32));
    return processKey;
  }
  const info = "generation-mcp requestState v1";
  return new Uint8Array(hkdfSync("sha256", Buffer.from(first, "base64"), new Uint8Array(0), info, 32));
}

/** The MAC key of spending approvals, derived from the first GENERATION_AUTH_SECRET; none without it. */
export function approvalSecret(secrets: readonly string[] | undefined): Uint8Array | undefined {
  const first = secrets?.[0];
  if (first === undefined) return undefined;
  const info = "generation-mcp approval v1";
  return new Uint8Array(hkdfSync("sha256", Buffer.from(first, "base64"), new Uint8Array(0), info, 32));
}

/** What an engine contributes to its codec: its key hash, and the base key when it was given one. */
export interface AnswerScope {
  keyHash: string;
  answerKey?: Uint8Array | undefined;
}

const codecs = new WeakMap<AnswerScope, RequestStateCodec<AskedState>>();

/** The codec of one API key's engine: a key derived for it from the base key, kept with the engine. */
export function answerCodec(scope: AnswerScope): RequestStateCodec<AskedState> {
  let codec = codecs.get(scope);
  if (codec === undefined) {
    const base = scope.answerKey ?? answerKey(undefined);
    const key = hkdfSync("sha256", base, new Uint8Array(0), `generation-mcp answers ${scope.keyHash}`, 32);
    codec = createRequestStateCodec<AskedState>({ key: new Uint8Array(key), ttlSeconds: ANSWER_TTL_SECONDS });
    codecs.set(scope, codec);
  }
  return codec;
}

/**
 * `ServerOptions.requestState.verify`: the payload of a state that verifies; for any other, a
 * marker that reads as no answer, so the question is asked again rather than the call refused.
 */
export function verifyAnswers(scope: AnswerScope): (state: string, ctx: ServerContext) => Promise<unknown> {
  return async (state, ctx) => {
    try {
      return await answerCodec(scope).verify(state, ctx);
    } catch {
      return REJECTED;
    }
  };
}

/** The verified state of this round, or undefined (none sent, or it failed verification). */
export function askedState(value: unknown): AskedState | undefined {
  const v = value as Partial<AskedState> | null | undefined;
  if (v === null || typeof v !== "object") return undefined;
  const ok =
    typeof v.tool === "string" &&
    typeof v.args === "string" &&
    typeof v.nonce === "string" &&
    v.asked !== null &&
    typeof v.asked === "object";
  return ok ? (v as AskedState) : undefined;
}

/** The digest an AskedState binds: SHA-256 of the arguments as canonical JSON. */
export const argumentsDigest = (args: unknown): string =>
  createHash("sha256").update(canonicalJson(args)).digest("hex");

export const newNonce = (): string => randomBytes(12).toString("base64url");

/** Nonces honoured in this process, with when their state expires; bounded, oldest dropped first. */
const honoured = new Map<string, number>();
const MAX_HONOURED = 10_000;

/** True the first time a nonce is honoured here; false for a state whose answer was already used. */
export function honourOnce(nonce: string, now = Date.now()): boolean {
  if (honoured.has(nonce)) return false;
  if (honoured.size >= MAX_HONOURED) {
    for (const [n, expires] of honoured) if (expires <= now) honoured.delete(n);
    while (honoured.size >= MAX_HONOURED) {
      const oldest = honoured.keys().next().value;
      if (oldest === undefined) break;
      honoured.delete(oldest);
    }
  }
  honoured.set(nonce, now + ANSWER_TTL_SECONDS * 1000);
  return true;
}
