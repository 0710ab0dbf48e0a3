/** Validation, quotes and outputs for audio: speech and voice cloning on service-voice, and music. */

import {
  type MediaRequest,
  MUSIC_ADVANCED_ONLY,
  MusicParametersSchema,
  parseOrThrow,
  SpeechParametersSchema,
} from "../client/schemas.js";
import { LIMITS } from "../config/service-limits.js";
import type { AssetRecord } from "./assets.js";
import { validated } from "./body.js";
import { renderAudio } from "./media/wav.js";
import { type CatalogModel, capList } from "./model-catalog.js";
import { checkParameterNames, type MediaPlan, type PlanDeps, seedOf } from "./plan.js";
import { invalid, invalidReference } from "./sandbox-errors.js";

export function planAudio(body: MediaRequest, m: CatalogModel, d: PlanDeps): MediaPlan {
  const op = body.operation;
  if (op === undefined) throw invalid("operation: required for audio (speech, music or voice_clone).");
  const ops = capList(m, "operations");
  if (!ops.includes(op)) {
    throw invalid(`operation: ${op} is not offered by model ${m.id} (offers: ${ops.join(", ")}).`);
  }
  return op === "music" ? planMusic(body, m, d) : planSpeech(body, m, d, op);
}

function planSpeech(
  body: MediaRequest,
  m: CatalogModel,
  d: PlanDeps,
  op: "speech" | "voice_clone",
): MediaPlan {
  if (body.prompt.length > LIMITS.speech.prompt) {
    throw invalid(`prompt: ${body.prompt.length} characters; speech allows at most ${LIMITS.speech.prompt}.`);
  }
  if (body.prompt.trim() === "") throw invalid("prompt: the text to speak is empty.");
  if (body.referenceAssetIds.length > 0) {
    throw invalid(
      "referenceAssetIds: speech and cloning take parameters.voiceProfileId, not media references.",
    );
  }
  const p = validated(() => parseOrThrow(SpeechParametersSchema, body.parameters, "parameters"));
  checkParameterNames(p, m);
  const voice =
    op === "voice_clone"
      ? d.voices.ownPrivate(d.ownerId, p.voiceProfileId)
      : d.voices.usable(d.ownerId, p.voiceProfileId);
  if (!voice) {
    throw invalidReference(
      op === "voice_clone"
        ? `parameters.voiceProfileId: ${p.voiceProfileId} is not a private voice uploaded by this key.`
        : `parameters.voiceProfileId: ${p.voiceProfileId} is not a voice from the voice list.`,
    );
  }
  // Roughly 15 characters a second of speech, slower or faster with `speed`.
  const seconds = Math.max(1, Math.round((body.prompt.length / 15 / (p.speed ?? 1)) * 10) / 10);
  const quote = (m.pricing.perUnit ?? 1) * (1 + Math.ceil(body.prompt.length / 250));
  const seed = seedOf([m.id, op, body.prompt, p]);
  return {
    quote,
    outputs: [{ kind: "audio", mimeType: "audio/wav", render: () => renderAudio(seed, seconds) }],
    queuedMs: 1_000,
    processingMs: 3_000,
    refs: [],
  };
}

function planMusic(body: MediaRequest, m: CatalogModel, d: PlanDeps): MediaPlan {
  const p = validated(() => parseOrThrow(MusicParametersSchema, body.parameters, "parameters"));
  checkParameterNames(p, m);
  const mode = p.musicMode ?? "simple";
  if (mode === "simple") {
    for (const name of MUSIC_ADVANCED_ONLY) {
      if (p[name] !== undefined) throw invalid(`parameters.${name}: only with musicMode advanced.`);
    }
    if (body.prompt.length > LIMITS.music.simplePrompt) {
      throw invalid(`prompt: simple mode allows at most ${LIMITS.music.simplePrompt} characters.`);
    }
  }
  const refs: AssetRecord[] = [];
  if (p.coverAudio !== undefined && body.referenceAssetIds.length > 0) {
    throw invalid(
      "referenceAssetIds: give the cover audio either as parameters.coverAudio or here, not both.",
    );
  }
  if (body.referenceAssetIds.length > 1) {
    throw invalid("referenceAssetIds: music takes at most one audio reference (the cover audio).");
  }
  const cover = p.coverAudio ?? body.referenceAssetIds[0];
  if (cover !== undefined) {
    const field = p.coverAudio !== undefined ? "parameters.coverAudio" : "referenceAssetIds[0]";
    refs.push(d.assets.reference(d.ownerId, cover, field, ["audio"]));
  }
  const seconds = p.duration === undefined || p.duration === "off" ? 30 : Number(p.duration);
  const quote = Math.ceil((m.pricing.perUnit ?? 5) * (seconds / 30));
  const seed = seedOf([m.id, body.prompt, p]);
  return {
    quote,
    outputs: [{ kind: "audio", mimeType: "audio/wav", render: () => renderAudio(seed, seconds) }],
    queuedMs: 1_000,
    processingMs: 4_000,
    refs,
  };
}
