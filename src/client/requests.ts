/**
 * Request bodies, serialised canonically: identical input gives byte-identical bodies, which
 * is what lets the ledger recognise a replay and send exactly the bytes it stored. The input was
 * checked once, at the edge, by the tool's schema (the bounds of docs/service.md#request-bodies
 * from schemas.ts, its cross-field rules from request-rules.ts); here it is only asserted.
 */

import { strict as assert } from "node:assert";
import { AUDIO_OPERATIONS, LIMITS, MEDIA_KINDS, type MediaKind } from "../config/service-limits.js";
import { ArgumentError } from "./local-refusals.js";
import type { ChatRequest, ExtractRequest, MediaRequest } from "./schemas.js";

const fmt = (n: number) => n.toLocaleString("en-US");
const byteLength = (s: string) => Buffer.byteLength(s, "utf8");

/**
 * JSON with object keys sorted recursively and `undefined` members dropped. Values JSON
 * cannot carry faithfully (functions, bigints, non-finite numbers) are refused by name.
 */
export function canonicalJson(value: unknown, field = ""): string {
  return JSON.stringify(canonicalValue(value, field));
}

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

export function buildMediaBody(
  kind: MediaKind,
  input: MediaBodyInput,
): { body: MediaRequest; bytes: string } {
  assert.ok(MEDIA_KINDS.includes(kind), `media kind ${kind}`);
  const { operation } = input;
  assert.equal(operation !== undefined, kind === "audio", "operation is given for audio only");
  assert.ok(isOperation(operation), `audio operation ${operation}`);
  const body: MediaRequest = {
    model: input.model,
    prompt: input.prompt,
    parameters: input.parameters ?? {},
    referenceAssetIds: input.referenceAssetIds ?? [],
    ...(input.maxGems === undefined ? {} : { maxGems: input.maxGems }),
    ...(operation === undefined ? {} : { operation }),
  };
  return { body, bytes: canonicalJson(body) };
}

// ---------- text ----------

export function buildChatBody(body: ChatRequest): { body: ChatRequest; bytes: string } {
  const bytes = canonicalJson(body);
  // The conversation's own bound (128,000 bytes) was checked at the edge; past it, the other
  // fields are small, so this only holds the service's limit (docs/service.md#chat) as an assertion.
  assertMaxBytes(bytes, LIMITS.text.requestBytes, "(request)", "the request");
  return { body, bytes };
}

// ---------- extraction ----------

export function buildExtractBody(body: ExtractRequest): { body: ExtractRequest; bytes: string } {
  const bytes = canonicalJson(body);
  // Valid fields stay well under this (prompt 2,000 characters); held all the same.
  assertMaxBytes(bytes, LIMITS.extraction.requestBytes, "(request)", "the extraction request JSON");
  return { body, bytes };
}
