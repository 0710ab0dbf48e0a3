/**
 * The rules of a request body that span several fields (docs/service.md#media-requests and docs/service.md#chat:
 * speech prompts, music modes, video modes, the conversation's size), stated once. A tool's input
 * schema carries them with `withRules` (src/tools/media_args.ts, src/tools/chat.ts), so arguments
 * are checked once, at the edge (src/mcp/define-tool.ts); requests.ts then only serialises. The
 * `*BodySchema` forms are the same checks for callers of the client itself.
 */
import type { z } from "zod";
import { LIMITS, type MediaKind } from "../config/service-limits.js";
import { ArgumentError } from "../shared/local-refusals.js";
import { assertMaxBytes, canonicalJson } from "./requests.js";
import {
  ChatRequestSchema,
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

const fmt = (n: number) => n.toLocaleString("en-US");

/**
 * `schema` with `rules` run on its parsed value: an ArgumentError they throw becomes the schema's
 * issue for that field, so `parseOrThrow` reports it like any bound.
 */
export function withRules<S extends z.ZodObject>(schema: S, rules: (value: z.output<S>) => void): S {
  return schema.superRefine((value, ctx) => {
    try {
      rules(value as z.output<S>);
    } catch (err) {
      if (!(err instanceof ArgumentError)) throw err;
      ctx.addIssue({ code: "custom", path: [err.field], message: err.detail });
    }
  }) as S;
}

/** The fields of a media body the rules read (a tool's arguments carry more). */
type MediaFields = Pick<MediaRequest, "prompt" | "parameters" | "referenceAssetIds"> & {
  operation?: MediaRequest["operation"];
};

export function checkMediaRules(kind: MediaKind, body: MediaFields): void {
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
}

function checkVideo(body: MediaFields): void {
  const p = parseOrThrow(VideoParametersSchema, body.parameters, "parameters");
  // docs/service.md#media-requests: `mode` is `text-to-video` or `image-to-video`; "set it explicitly".
  if (p.mode === undefined) {
    throw new ArgumentError(
      "parameters.mode",
      "is required for video: text-to-video, or image-to-video with parameters.sourceImage",
    );
  }
  if (p.mode === "image-to-video" && p.sourceImage === undefined) {
    throw new ArgumentError(
      "parameters.sourceImage",
      "is required when mode is image-to-video (an owned image asset ID for the first frame)",
    );
  }
}

function checkAudio(body: MediaFields): void {
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
  checkMusic(body);
}

function checkMusic(body: MediaFields): void {
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

/** The serialized conversation's bound: the fields each pass, the whole may not. */
export function checkChatRules(body: { messages: unknown }): void {
  const conversation = canonicalJson(body.messages, "messages");
  assertMaxBytes(conversation, LIMITS.text.conversationBytes, "messages", "the serialized conversation");
}

/** A media body of `kind`, every rule included, for callers of the client itself. */
export const mediaBodySchema = (kind: MediaKind) =>
  withRules(MediaRequestSchema, (body) => checkMediaRules(kind, body));
export const ChatBodySchema = withRules(ChatRequestSchema, checkChatRules);
