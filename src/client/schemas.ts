/**
 * zod schemas of the service's responses and request bodies (docs/service.md).
 * Response objects the service closes (docs/service.md#responses) are strict; the others
 * are loose, so unknown fields are kept, not rejected.
 * Request schemas carry every bound of docs/service.md#request-bodies; `parseOrThrow`
 * (parse-or-throw.ts) turns a failure into an ArgumentError naming the field and the limit, before
 * anything is sent. Building these schemas is a few milliseconds of zod: nothing on the way to the
 * first tools/list imports this module (service-client.ts loads it on its first request).
 */
import { z } from "zod";
import { AUDIO_OPERATIONS, LIMITS, MODEL_KINDS, TASK_STATUSES } from "../config/service-limits.js";

// ---------- responses ----------

export const ErrorEnvelopeSchema = z.strictObject({
  error: z.strictObject({ message: z.string(), code: z.string().optional() }),
});

export const ModelSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  kind: z.enum(MODEL_KINDS),
  available: z.boolean().optional(),
  baseGems: z.number().optional(),
  capabilities: z.record(z.string(), z.unknown()),
});
export type Model = z.infer<typeof ModelSchema>;

export const ModelListSchema = z.strictObject({
  models: z.array(ModelSchema),
  accountingPeriod: z.literal("UTC calendar month"),
});
export type ModelList = z.infer<typeof ModelListSchema>;

export const OutputAssetSchema = z.looseObject({
  id: z.string(),
  kind: z.string(),
  mimeType: z.string(),
  url: z.string(),
});

export const TaskOutputSchema = z.looseObject({
  index: z.number().int(),
  status: z.string(),
  asset: OutputAssetSchema.nullable(),
});

export const TaskErrorSchema = z.looseObject({ code: z.string(), message: z.string() });

export const TaskSchema = z.looseObject({
  id: z.string(),
  // Known values are TASK_STATUSES; an unknown one is kept rather than failing the read.
  status: z.union([z.enum(TASK_STATUSES), z.string()]),
  quotedGems: z.number(),
  chargedGems: z.number(),
  releasedGems: z.number(),
  error: TaskErrorSchema.nullable(),
  outputs: z.array(TaskOutputSchema),
});
export type Task = z.infer<typeof TaskSchema>;

export const SubmissionSchema = z.looseObject({ task: TaskSchema, created: z.boolean() });
export type Submission = z.infer<typeof SubmissionSchema>;

export const TaskEnvelopeSchema = z.strictObject({ task: TaskSchema });

export const AssetSchema = z.looseObject({
  id: z.string(),
  kind: z.enum(["image", "video", "audio"]),
  state: z.string(),
  url: z.string().nullable(),
});
export type Asset = z.infer<typeof AssetSchema>;
export const AssetEnvelopeSchema = z.looseObject({ asset: AssetSchema });

export const VoiceSchema = z.looseObject({ id: z.string(), name: z.string() });
export type Voice = z.infer<typeof VoiceSchema>;
export const VoiceListSchema = z.looseObject({ voices: z.array(VoiceSchema) });
export type VoiceList = z.infer<typeof VoiceListSchema>;

/**
 * Whether a page of voices has more after it: the service says so in its pagination data (the
 * sandbox: `hasMore`, docs/service.md#voice-list); a full page with no such word may have more too.
 */
export function voicesFollow(list: VoiceList): boolean {
  const { hasMore } = list as { hasMore?: unknown };
  return hasMore === true || (hasMore === undefined && list.voices.length >= LIMITS.voice.perPage);
}
export const VoiceEnvelopeSchema = z.looseObject({ voice: VoiceSchema });

export const ExtractionSchema = z.looseObject({
  analysis: z.unknown(),
  durationSeconds: z.number(),
  frames: z.array(z.unknown()),
  segments: z.array(z.unknown()).optional(),
});
export type Extraction = z.infer<typeof ExtractionSchema>;
export const ExtractionResponseSchema = z.looseObject({ id: z.string(), extraction: ExtractionSchema });
export type ExtractionResponse = z.infer<typeof ExtractionResponseSchema>;

export const UsageSchema = z.looseObject({
  prompt_tokens: z.number().optional(),
  completion_tokens: z.number().optional(),
  total_tokens: z.number().optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

export const ChatCompletionSchema = z.looseObject({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number().optional(),
      message: z.looseObject({ role: z.string().optional(), content: z.string().nullable() }),
      finish_reason: z.string().nullable(),
    }),
  ),
  usage: UsageSchema.optional(),
});

export const ChatChunkSchema = z.looseObject({
  id: z.string().optional(),
  object: z.literal("chat.completion.chunk").optional(),
  created: z.number().optional(),
  model: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        index: z.number().optional(),
        delta: z.looseObject({ content: z.string().nullable().optional() }).optional(),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .default([]),
  usage: UsageSchema.nullable().optional(),
});

// ---------- requests ----------

const L = LIMITS;
const assetId = z.string().min(L.referenceAssetIds.idMin).max(L.referenceAssetIds.idMax);

export const IdempotencyKeySchema = z
  .string()
  .regex(L.idempotencyKeyPattern, "must be 1 to 128 characters of letters, digits, `_`, `.`, `:`, `-`");
export const ApiKeySchema = z
  .string()
  .regex(L.apiKeyPattern, "must be `lgk_` followed by 64 lowercase hex digits");

export const ModelIdSchema = z.string().min(L.modelId.min).max(L.modelId.max);
export const MediaPromptSchema = z.string().max(L.mediaPrompt);
export const ReferenceAssetIdsSchema = z.array(assetId).max(L.referenceAssetIds.maxItems);
export const MediaMaxGemsSchema = z.number().int().min(0).max(L.mediaMaxGems);
export const TextMaxGemsSchema = z.number().int().min(0).max(L.textMaxGems);

/** Names the service rejects inside `parameters` (docs/service.md#media-requests). */
export const FORBIDDEN_PARAMETER_NAMES = ["provider", "model", "prompt", "sourceTool"] as const;

export const MediaRequestSchema = z.strictObject({
  model: ModelIdSchema,
  prompt: MediaPromptSchema,
  parameters: z.record(z.string(), z.unknown()).default({}),
  referenceAssetIds: ReferenceAssetIdsSchema.default([]),
  maxGems: MediaMaxGemsSchema.optional(),
  operation: z.enum(AUDIO_OPERATIONS).optional(),
});
export type MediaRequest = z.infer<typeof MediaRequestSchema>;

// Known parameters per kind: bounds are checked; other names pass through for the service
// to judge, since style, reference and LoRA inputs are model-specific.
export const ImageParametersSchema = z.looseObject({
  ratio: z.string().optional(),
  resolution: z.string().optional(),
  outputCount: z.number().int().min(L.image.outputCount.min).max(L.image.outputCount.max).optional(),
  negativePrompt: z.string().max(L.image.negativePrompt).optional(),
  magicPrompt: z.boolean().optional(),
  sourceImage: assetId.optional(),
  background: z.enum(["auto", "transparent", "opaque"]).optional(),
  variant: z.string().optional(),
});

export const VideoParametersSchema = z.looseObject({
  mode: z.enum(["text-to-video", "image-to-video"]).optional(),
  sourceImage: assetId.optional(),
  endFrame: assetId.optional(),
  duration: z.number().positive().optional(),
  ratio: z.string().optional(),
  resolution: z.string().optional(),
  audio: z.unknown().optional(),
  referenceVideo: assetId.optional(),
  referenceVideos: z.array(assetId).optional(),
  referenceAudios: z.array(assetId).optional(),
});

export const SpeechParametersSchema = z.looseObject({
  voiceProfileId: z.string().min(1),
  speed: z.number().min(L.speech.speed.min).max(L.speech.speed.max).optional(),
  volume: z.number().min(L.speech.volume.min).max(L.speech.volume.max).optional(),
  temperature: z.number().min(L.speech.temperature.min).max(L.speech.temperature.max).optional(),
});

export const MusicParametersSchema = z.looseObject({
  musicMode: z.enum(L.music.modes).optional(),
  instrumental: z.enum(L.music.instrumental).optional(),
  style: z.string().max(L.music.style).optional(),
  title: z.string().max(L.music.title).optional(),
  negativeTags: z.string().max(L.music.negativeTags).optional(),
  vocalGender: z.enum(L.music.vocalGenders).optional(),
  duration: z.enum(L.music.durations).optional(),
  coverAudio: assetId.optional(),
});
export const MUSIC_ADVANCED_ONLY = ["style", "title", "negativeTags", "vocalGender", "duration"] as const;

export const ChatMessageSchema = z.strictObject({
  role: z.enum(["system", "user", "assistant"]).describe("Who speaks."),
  content: z.string().max(L.text.content).describe("Message text."),
});

export const ChatRequestSchema = z.strictObject({
  model: ModelIdSchema,
  messages: z.array(ChatMessageSchema).min(L.text.messages.min).max(L.text.messages.max),
  stream: z.boolean().optional(),
  max_tokens: z.number().int().min(L.text.maxTokens.min).max(L.text.maxTokens.max).optional(),
  temperature: z.number().min(L.text.temperature.min).max(L.text.temperature.max).optional(),
  top_p: z.number().min(L.text.topP.min).max(L.text.topP.max).optional(),
  response_format: z
    .strictObject({ type: z.enum(["text", "json_object"]).describe("The format.") })
    .optional(),
  maxGems: TextMaxGemsSchema.optional(),
});
export type ChatRequest = z.infer<typeof ChatRequestSchema>;

export const ExtractRequestSchema = z.strictObject({
  model: ModelIdSchema,
  videoAssetId: assetId,
  prompt: z.string().max(L.extraction.prompt).optional(),
  maxGems: TextMaxGemsSchema.optional(),
});
export type ExtractRequest = z.infer<typeof ExtractRequestSchema>;

export const VoiceListQuerySchema = z.strictObject({
  scope: z.enum(["mine", "explore"]).optional(),
  page: z.number().int().min(L.voice.pageMin).max(L.voice.pageMax).optional(),
  language: z.string().min(1).optional(),
});
export type VoiceListQuery = z.infer<typeof VoiceListQuerySchema>;

// ---------- local validation ----------

export { parseOrThrow } from "./parse-or-throw.js";
