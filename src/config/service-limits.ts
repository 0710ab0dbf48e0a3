/**
 * Every bound the service states (docs/service.md#limits), in one place, so the client refuses
 * bad input before sending and the sandbox enforces the same numbers.
 * Names follow that Limits table.
 */
export const LIMITS = {
  idempotencyKeyPattern: /^[a-zA-Z0-9_.:-]{1,128}$/,
  apiKeyPattern: /^lgk_[0-9a-f]{64}$/,
  modelId: { min: 1, max: 150 },
  mediaPrompt: 30_000,
  referenceAssetIds: { maxItems: 10, idMin: 1, idMax: 128 },
  mediaMaxGems: 1_000_000_000,
  textMaxGems: 1_000_000,
  image: { outputCount: { min: 1, max: 4 }, negativePrompt: 1_000 },
  speech: {
    prompt: 2_000,
    speed: { min: 0.5, max: 2, default: 1 },
    volume: { min: -6, max: 6, default: 0 },
    temperature: { min: 0, max: 1, default: 0.7 },
  },
  music: {
    simplePrompt: 5_000,
    style: 1_000,
    title: 80,
    negativeTags: 200,
    durations: ["off", "30", "60", "120", "180", "240"] as const,
    vocalGenders: ["auto", "m", "f"] as const,
    modes: ["simple", "advanced"] as const,
    instrumental: ["on", "off"] as const,
  },
  asset: { maxBytes: 31_457_280, filename: 255 },
  voice: {
    minBytes: 1,
    maxBytes: 50 * 1024 * 1024,
    duration: { min: 15, max: 300 },
    pageMin: 1,
    pageMax: 10_000,
    perPage: 50,
  },
  text: {
    messages: { min: 1, max: 60 },
    content: 30_000,
    requestBytes: 160_000,
    conversationBytes: 128_000,
    maxTokens: { min: 1, max: 8_192, default: 4_096 },
    temperature: { min: 0, max: 2 },
    topP: { min: 0, max: 1 },
  },
  extraction: {
    requestBytes: 16_000,
    prompt: 2_000,
    videoBytesBelow: 25 * 1024 * 1024,
    videoSecondsBelow: 120,
    reservationInputTokens: 262_144,
    reservationOutputTokens: 8_192,
  },
  polling: { scheduleSeconds: [2, 4, 8, 15] as const },
} as const;

export const TASK_STATUSES = ["queued", "processing", "succeeded", "partial", "failed", "cancelled"] as const;
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set([
  "succeeded",
  "partial",
  "failed",
  "cancelled",
]);
export const isTerminal = (status: string): boolean => TERMINAL_STATUSES.has(status);

export const MEDIA_KINDS = ["image", "video", "audio"] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];
export const AUDIO_OPERATIONS = ["speech", "music", "voice_clone"] as const;
export const MODEL_KINDS = ["image", "video", "audio", "text"] as const;

/** The speech and voice-cloning model (docs/service.md#media-requests). */
export const VOICE_MODEL_ID = "service-voice";
