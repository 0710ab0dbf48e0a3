/**
 * The sandbox's model catalog. Public entries carry only a model's fields (docs/service.md#responses)
 * (id, name, kind, available, baseGems, capabilities); prices and timings the sandbox uses
 * internally stay in `pricing`, outside the listed object.
 */

import { VOICE_MODEL_ID } from "../config/service-limits.js";
import { withArticle } from "../shared/wording.js";
import { modelUnavailable } from "./sandbox-errors.js";

export interface CatalogModel {
  id: string;
  name: string;
  kind: "image" | "video" | "audio" | "text";
  available?: boolean;
  baseGems?: number;
  capabilities: Record<string, unknown>;
  /** Internal price factors: video Gems per second, audio Gems per unit, text Gems per 1k tokens. */
  pricing: { perSecond?: number; perUnit?: number; per1kTokens?: number };
}

const RATIOS = ["1:1", "16:9", "9:16", "4:3", "3:4"];
export const MUSIC_MODEL_ID = "sandbox-music";

export const MODELS: readonly CatalogModel[] = [
  {
    id: "sandbox-image-fast",
    name: "Sandbox Image Fast",
    kind: "image",
    available: true,
    baseGems: 2,
    capabilities: {
      ratios: RATIOS,
      resolutions: ["1K"],
      maxOutputs: 4,
      maxReferenceImages: 0,
      parameters: ["ratio", "resolution", "outputCount", "negativePrompt", "magicPrompt", "variant"],
      variants: ["standard", "vivid"],
    },
    pricing: {},
  },
  {
    id: "sandbox-image-pro",
    name: "Sandbox Image Pro",
    kind: "image",
    available: true,
    baseGems: 8,
    capabilities: {
      ratios: [...RATIOS, "3:2", "2:3"],
      resolutions: ["1K", "2K", "4K"],
      resolutionMultipliers: { "1K": 1, "2K": 2, "4K": 4 },
      maxOutputs: 4,
      maxReferenceImages: 4,
      backgrounds: ["auto", "transparent", "opaque"],
      parameters: ["ratio", "resolution", "outputCount", "negativePrompt", "magicPrompt", "background"],
    },
    pricing: {},
  },
  {
    id: "sandbox-image-edit",
    name: "Sandbox Image Edit",
    kind: "image",
    available: true,
    baseGems: 6,
    capabilities: {
      ratios: ["1:1", "16:9", "9:16"],
      resolutions: ["1K"],
      maxOutputs: 2,
      maxReferenceImages: 2,
      requiresSourceImage: true,
      parameters: ["sourceImage", "ratio", "resolution", "outputCount", "negativePrompt"],
    },
    pricing: {},
  },
  {
    id: "sandbox-image-legacy",
    name: "Sandbox Image Legacy (retired)",
    kind: "image",
    available: false,
    baseGems: 1,
    capabilities: { ratios: ["1:1"], resolutions: ["1K"], maxOutputs: 1, parameters: ["ratio"] },
    pricing: {},
  },
  {
    id: "sandbox-video-lite",
    name: "Sandbox Video Lite",
    kind: "video",
    capabilities: {
      inputs: ["text", "image"],
      modes: ["text-to-video", "image-to-video"],
      aspectRatios: ["16:9", "9:16", "1:1"],
      durations: [5, 10],
      resolutions: ["720p"],
      audio: ["off"],
      maxReferenceImages: 0,
      maxReferenceVideos: 0,
      maxReferenceAudios: 0,
      endFrame: false,
      parameters: ["mode", "sourceImage", "duration", "ratio", "resolution", "audio"],
    },
    pricing: { perSecond: 4 },
  },
  {
    id: "sandbox-video-pro",
    name: "Sandbox Video Pro",
    kind: "video",
    capabilities: {
      inputs: ["text", "image", "video", "audio"],
      modes: ["text-to-video", "image-to-video"],
      aspectRatios: ["16:9", "9:16"],
      durations: [4, 6, 8],
      resolutions: ["720p", "1080p"],
      audio: ["on", "off"],
      maxReferenceImages: 3,
      maxReferenceImagesByResolution: { "720p": 3, "1080p": 1 },
      maxReferenceVideos: 1,
      maxReferenceAudios: 1,
      referenceDurations: { maxSeconds: 10 },
      endFrame: true,
      parameters: [
        "mode",
        "sourceImage",
        "endFrame",
        "duration",
        "ratio",
        "resolution",
        "audio",
        "referenceVideo",
        "referenceVideos",
        "referenceAudios",
      ],
    },
    pricing: { perSecond: 10 },
  },
  {
    id: VOICE_MODEL_ID,
    name: "Service Voice (speech and voice cloning)",
    kind: "audio",
    available: true,
    capabilities: {
      operations: ["speech", "voice_clone"],
      maxPromptChars: 2_000,
      speed: { min: 0.5, max: 2, default: 1 },
      volume: { min: -6, max: 6, default: 0 },
      temperature: { min: 0, max: 1, default: 0.7 },
      parameters: ["voiceProfileId", "speed", "volume", "temperature"],
      output: "audio/wav",
    },
    pricing: { perUnit: 1 },
  },
  {
    id: MUSIC_MODEL_ID,
    name: "Sandbox Music",
    kind: "audio",
    available: true,
    capabilities: {
      operations: ["music"],
      musicModes: ["simple", "advanced"],
      durations: ["off", "30", "60", "120", "180", "240"],
      parameters: [
        "musicMode",
        "instrumental",
        "style",
        "title",
        "negativeTags",
        "vocalGender",
        "duration",
        "coverAudio",
      ],
      output: "audio/wav",
    },
    pricing: { perUnit: 5 },
  },
  {
    id: "sandbox-chat-small",
    name: "Sandbox Chat Small",
    kind: "text",
    available: true,
    capabilities: {
      contextTokens: 32_000,
      maxOutputTokens: 8_192,
      streaming: true,
      responseFormats: ["text", "json_object"],
    },
    pricing: { per1kTokens: 1 },
  },
  {
    id: "sandbox-chat-large",
    name: "Sandbox Chat Large",
    kind: "text",
    available: true,
    capabilities: {
      contextTokens: 128_000,
      maxOutputTokens: 8_192,
      streaming: true,
      responseFormats: ["text", "json_object"],
    },
    pricing: { per1kTokens: 4 },
  },
];

export function publicCatalog(): { models: unknown[]; accountingPeriod: "UTC calendar month" } {
  return {
    models: MODELS.map(({ pricing: _pricing, ...entry }) => entry),
    accountingPeriod: "UTC calendar month",
  };
}

/** The model for an endpoint, or 422 MODEL_UNAVAILABLE (unknown, wrong kind, or unavailable). */
export function findModel(id: string, kind: CatalogModel["kind"]): CatalogModel {
  const m = MODELS.find((x) => x.id === id);
  if (!m) throw modelUnavailable(`model: ${JSON.stringify(id)} is not in the catalog.`);
  if (m.kind !== kind)
    throw modelUnavailable(`model: ${id} is ${withArticle(m.kind)} model, not ${withArticle(kind)} one.`);
  if (m.available === false) throw modelUnavailable(`model: ${id} is not available.`);
  return m;
}

export const capList = <T = string>(m: CatalogModel, name: string): T[] =>
  (Array.isArray(m.capabilities[name]) ? m.capabilities[name] : []) as T[];
export const capNumber = (m: CatalogModel, name: string, fallback = 0): number =>
  typeof m.capabilities[name] === "number" ? (m.capabilities[name] as number) : fallback;
