/**
 * Request bodies, serialised canonically: identical input gives byte-identical bodies, which
 * is what lets the ledger recognise a replay and send exactly the bytes it stored. The input was
 * checked once, at the edge, by the tool's schema (the bounds of docs/service.md#request-bodies
 * from schemas.ts, its cross-field rules from request-rules.ts); here it is only asserted.
 *
 * A paid call's ceiling (`maxGems`) is known only once spending is confirmed, after every check:
 * so a body is first prepared (`prepare…Body`: its fields checked for what JSON and the request's
 * size allow, and put in canonical form), then built once under its ceiling (`buildUnder`).
 */

import { AUDIO_OPERATIONS, LIMITS, MEDIA_KINDS, type MediaKind } from "../config/service-limits.js";
import { ArgumentError } from "../shared/local-refusals.js";
import type { ChatRequest, ExtractRequest, MediaRequest } from "./schemas.js";

/**
 * node:assert, taken where it asserts rather than imported: answers.ts imports this module before
 * the first tools/list, and node:assert with its diff and colour helpers is half a millisecond.
 */
type Assert = typeof import("node:assert").strict;
const strictAssert = (): Assert => process.getBuiltinModule("node:assert").strict;

const fmt = (n: number) => n.toLocaleString("en-US");
const byteLength = (s: string) => Buffer.byteLength(s, "utf8");

/**
 * JSON with object keys sorted recursively and `undefined` members dropped. Values JSON
 * cannot carry faithfully (functions, bigints, non-finite numbers) are refused by name.
 */
export function canonicalJson(value: unknown, field = ""): string {
  return JSON.stringify(canonicalValue(value, field));
}

/** `value` in canonical form (keys sorted, undefined dropped), refusing what JSON cannot carry. */
function canonicalValue(value: unknown, field: string): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new ArgumentError(field || "(body)", "must be a finite number");
    return value;
  }
  if (Array.isArray(value)) {
    return value.map((item, i) => (item === undefined ? null : canonicalValue(item, `${field}[${i}]`)));
  }
  if (typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw new ArgumentError(field || "(body)", "must be a plain JSON object");
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) out[key] = canonicalValue(member, field ? `${field}.${key}` : key);
    }
    return out;
  }
  throw new ArgumentError(field || "(body)", `must be JSON (got ${typeof value})`);
}

/** Refuses a serialised body over `limit` bytes, naming the field and the limit. */
export function assertMaxBytes(bytes: string, limit: number, field: string, what: string): void {
  const size = byteLength(bytes);
  if (size > limit) {
    throw new ArgumentError(field, `${what} must be at most ${fmt(limit)} bytes (got ${fmt(size)})`);
  }
}

// ---------- prepared, then built under the ceiling ----------

/** What every body may carry: the ceiling comes last, once spending is confirmed. */
interface Ceilinged {
  model: string;
  maxGems?: number | undefined;
}

/**
 * A body checked and in canonical form, before its ceiling is known. `body` (without `maxGems`) is
 * what spending is confirmed for; nothing is serialised until `buildUnder`.
 */
export interface Prepared<B extends Ceilinged> {
  readonly body: Omit<B, "maxGems">;
  readonly canonical: Readonly<Record<string, unknown>>;
}

function prepared<B extends Ceilinged>(body: Omit<B, "maxGems">): Prepared<B> {
  return { body, canonical: canonicalValue(body, "") as Record<string, unknown> };
}

/** The canonical value with a top-level member added where the sorted order puts it. */
function withMember(canonical: Readonly<Record<string, unknown>>, key: string, value: unknown) {
  const out: Record<string, unknown> = {};
  for (const k of [...Object.keys(canonical), key].sort()) out[k] = k === key ? value : canonical[k];
  return out;
}

/**
 * The body under its confirmed ceiling, built once: the bytes the ledger stores and every attempt
 * sends. No ceiling sends none (the service's own rule applies).
 */
export function buildUnder<B extends Ceilinged>(
  p: Prepared<B>,
  maxGems: number | undefined,
): { body: B; bytes: string } {
  if (maxGems === undefined) return { body: p.body as B, bytes: JSON.stringify(p.canonical) };
  // A ceiling of ours (a checked setting or argument, or an amount asked about) is finite; held.
  const ceiling = canonicalValue(maxGems, "maxGems");
  const bytes = JSON.stringify(withMember(p.canonical, "maxGems", ceiling));
  return { body: { ...p.body, maxGems } as B, bytes };
}

/**
 * A text or extraction body prepared, and refused if under the largest ceiling those endpoints take
 * (LIMITS.textMaxGems) it would be over `limit` bytes: so no ceiling confirmed later makes it too large.
 */
function preparedWithin<B extends Ceilinged>(
  body: Omit<B, "maxGems">,
  limit: number,
  what: string,
): Prepared<B> {
  const p = prepared<B>(body);
  const largest = JSON.stringify(withMember(p.canonical, "maxGems", LIMITS.textMaxGems));
  assertMaxBytes(largest, limit, "(request)", what);
  return p;
}

// ---------- media ----------

/**
 * A media body checked at the edge (a tool's arguments without its own fields); `parameters` and
 * `referenceAssetIds` default to empty, as the service's do (docs/service.md#request-bodies).
 */
export interface MediaBodyInput {
  model: string;
  prompt: string;
  parameters?: Record<string, unknown> | undefined;
  referenceAssetIds?: string[] | undefined;
  maxGems?: number | undefined;
  operation?: string | undefined;
}

const isOperation = (op: string | undefined): op is MediaRequest["operation"] =>
  op === undefined || (AUDIO_OPERATIONS as readonly string[]).includes(op);

/** A media body checked and in canonical form; its ceiling comes with buildUnder. */
export function prepareMediaBody(
  kind: MediaKind,
  input: Omit<MediaBodyInput, "maxGems">,
): Prepared<MediaRequest> {
  const assert: Assert = strictAssert();
  assert.ok(MEDIA_KINDS.includes(kind), `media kind ${kind}`);
  const { operation } = input;
  assert.equal(operation !== undefined, kind === "audio", "operation is given for audio only");
  assert.ok(isOperation(operation), `audio operation ${operation}`);
  return prepared<MediaRequest>({
    model: input.model,
    prompt: input.prompt,
    parameters: input.parameters ?? {},
    referenceAssetIds: input.referenceAssetIds ?? [],
    ...(operation === undefined ? {} : { operation }),
  });
}

export function buildMediaBody(
  kind: MediaKind,
  input: MediaBodyInput,
): { body: MediaRequest; bytes: string } {
  const { maxGems, ...fields } = input;
  return buildUnder(prepareMediaBody(kind, fields), maxGems);
}

// ---------- text ----------

/** A chat body checked and in canonical form; its ceiling comes with buildUnder. */
export function prepareChatBody(body: Omit<ChatRequest, "maxGems">): Prepared<ChatRequest> {
  // The conversation's own bound (128,000 bytes) was checked at the edge; past it, the other
  // fields are small, so this only holds the service's limit (docs/service.md#chat) as an assertion.
  return preparedWithin<ChatRequest>(body, LIMITS.text.requestBytes, "the request");
}

export function buildChatBody(body: ChatRequest): { body: ChatRequest; bytes: string } {
  const { maxGems, ...fields } = body;
  return buildUnder(prepareChatBody(fields), maxGems);
}

// ---------- extraction ----------

/** An extraction body checked and in canonical form; its ceiling comes with buildUnder. */
export function prepareExtractBody(body: Omit<ExtractRequest, "maxGems">): Prepared<ExtractRequest> {
  // Valid fields stay well under this (prompt 2,000 characters); held all the same.
  return preparedWithin<ExtractRequest>(body, LIMITS.extraction.requestBytes, "the extraction request JSON");
}

export function buildExtractBody(body: ExtractRequest): { body: ExtractRequest; bytes: string } {
  const { maxGems, ...fields } = body;
  return buildUnder(prepareExtractBody(fields), maxGems);
}

/**
 * The identity comes from the ledger, which holds only identities of the interface's pattern (a
 * caller's key was checked once, at the tool's edge): asserted here, not checked again.
 */
export function checkIdentity(key: string): string {
  // node:assert only when it fails: loading it is half a millisecond of every start (see requests.ts).
  if (key === "") process.getBuiltinModule("node:assert").strict.fail("an identity from the ledger");
  return key;
}

export function checkBytes(bytes: string): string {
  if (typeof bytes !== "string" || bytes === "") {
    throw new ArgumentError("bytes", "must be the JSON body built by requests.ts");
  }
  return bytes;
}
