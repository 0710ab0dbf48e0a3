/**
 * Request bodies, checked against every bound of docs/service.md#request-bodies before anything
 * is sent, and serialised canonically: identical input gives byte-identical bodies, which
 * is what lets the ledger recognise a replay and send exactly the bytes it stored.
 */

import { LIMITS, MEDIA_KINDS, type MediaKind } from "../config/service-limits.js";
import {
  type ChatRequest,
  ChatRequestSchema,
  type ExtractRequest,
  ExtractRequestSchema,
  FORBIDDEN_PARAMETER_NAMES,
  ImageParametersSchema,
  type MediaRequest,
  MediaRequestSchema,
  MUSIC_ADVANCED_ONLY,
  MusicParametersSchema,
  parseOrThrow,
  SpeechParametersSchema,
  VideoParametersSchema,
} from "./schemas.js";
import { ArgumentError } from "./service-errors.js";

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

export function buildMediaBody(kind: MediaKind, input: unknown): { body: MediaRequest; bytes: string } {
  if (!MEDIA_KINDS.includes(kind)) {
    throw new ArgumentError("kind", `must be one of ${MEDIA_KINDS.join(", ")}`);
  }
  const body = parseOrThrow(MediaRequestSchema, input);
  for (const name of FORBIDDEN_PARAMETER_NAMES) {
    if (Object.hasOwn(body.parameters, name)) {
      throw new ArgumentError(
        `parameters.${name}`,
        `is not accepted inside parameters (the service rejects ${FORBIDDEN_PARAMETER_NAMES.join(", ")} there)`,
      );
    }
  }
  if (kind === "audio") checkAudio(body);
  else if (body.operation !== undefined) {
    throw new ArgumentError("operation", "is only for audio submissions");
  }
  if (kind === "image") parseOrThrow(ImageParametersSchema, body.parameters, "parameters");
  if (kind === "video") checkVideo(body);
  return { body, bytes: canonicalJson(body) };
}

function checkVideo(body: MediaRequest): void {
  const p = parseOrThrow(VideoParametersSchema, body.parameters, "parameters");
  if (p.mode === "image-to-video" && p.sourceImage === undefined) {
    throw new ArgumentError(
      "parameters.sourceImage",
      "is required when mode is image-to-video (an owned image asset ID for the first frame)",
    );
  }
}

function checkAudio(body: MediaRequest): void {
  const op = body.operation;
  if (op === undefined) {
    throw new ArgumentError("operation", "is required for audio: one of speech, music, voice_clone");
  }
  if (op === "speech" || op === "voice_clone") {
    if (body.prompt.length > LIMITS.speech.prompt) {
      throw new ArgumentError(
        "prompt",
        `must be at most ${fmt(LIMITS.speech.prompt)} characters for ${op} (got ${fmt(body.prompt.length)})`,
      );
    }
    if (typeof body.parameters.voiceProfileId !== "string") {
      throw new ArgumentError(
        "parameters.voiceProfileId",
        `is required for ${op}: a voice ID from the voice list or a voice upload`,
      );
    }
    parseOrThrow(SpeechParametersSchema, body.parameters, "parameters");
    if (body.referenceAssetIds.length > 0) {
      throw new ArgumentError(
        "referenceAssetIds",
        `must be empty for ${op}: speech takes a voice profile, not media references`,
      );
    }
    return;
  }
  const p = parseOrThrow(MusicParametersSchema, body.parameters, "parameters");
  if (p.musicMode !== "advanced") {
    for (const name of MUSIC_ADVANCED_ONLY) {
      if (p[name] !== undefined) {
        throw new ArgumentError(
          `parameters.${name}`,
          'is only accepted when parameters.musicMode is "advanced"',
        );
      }
    }
    if (body.prompt.length > LIMITS.music.simplePrompt) {
      throw new ArgumentError(
        "prompt",
        `must be at most ${fmt(LIMITS.music.simplePrompt)} characters in simple music mode (got ${fmt(body.prompt.length)})`,
      );
    }
  }
  if (body.referenceAssetIds.length > 1) {
    throw new ArgumentError("referenceAssetIds", "must hold at most 1 audio asset ID for music");
  }
  if (p.coverAudio !== undefined && body.referenceAssetIds.length > 0) {
    throw new ArgumentError(
      "parameters.coverAudio",
      "and referenceAssetIds are alternatives: give the cover audio in one of them, not both",
    );
  }
}

// ---------- text ----------

export function buildChatBody(input: unknown): { body: ChatRequest; bytes: string } {
  const body = parseOrThrow(ChatRequestSchema, input);
  const conversation = canonicalJson(body.messages, "messages");
  assertMaxBytes(conversation, LIMITS.text.conversationBytes, "messages", "the serialized conversation");
  const bytes = canonicalJson(body);
  // Beyond a valid conversation the other fields are small, so this rarely binds; it is the
  // the service's limit all the same (docs/service.md#chat).
  assertMaxBytes(bytes, LIMITS.text.requestBytes, "(request)", "the request");
  return { body, bytes };
}

// ---------- extraction ----------

export function buildExtractBody(input: unknown): { body: ExtractRequest; bytes: string } {
  const body = parseOrThrow(ExtractRequestSchema, input);
  const bytes = canonicalJson(body);
  // Valid fields stay well under this (prompt 2,000 characters); checked all the same.
  assertMaxBytes(bytes, LIMITS.extraction.requestBytes, "(request)", "the extraction request JSON");
  return { body, bytes };
}
