/**
 * POST /api/generate/extract/video: synchronous analysis of an owned, ready video asset.
 * Frames are suggestions at unique times within the video; segments do not overlap.
 * A prompt containing `[sandbox:analysis-failed]` gives 409 ANALYSIS_FAILED, billed and
 * retained for replay (docs/service.md#errors).
 */

import { ExtractRequestSchema, parseOrThrow } from "../client/schemas.js";
import { LIMITS } from "../config/service-limits.js";
import { withArticle } from "../shared/wording.js";
import { readJson, validated } from "./body.js";
import { requireIdempotencyKey } from "./idempotency.js";
import { admit } from "./keys.js";
import { errorResponse, invalid, json, modelUnavailable } from "./sandbox-errors.js";
import type { RequestCtx } from "./state.js";
import { SANDBOX_MARKERS } from "./tasks.js";

export const SANDBOX_EXTRACTION_MODEL = "service-video-extract";
const GEMS_PER_1K_TOKENS = 0.1;
const TOKENS_PER_SECOND = 258;

export async function extractVideo(ctx: RequestCtx): Promise<Response> {
  const { s, key } = ctx;
  const identity = requireIdempotencyKey(ctx.req);
  const raw = await readJson(ctx.req, LIMITS.extraction.requestBytes, "The extraction request");
  const prior = s.idem.lookup(key.id, identity, ctx.route, raw);
  if (prior?.kind === "extraction") return json(prior.status, prior.body);
  const release = s.idem.hold(key.id, identity, ctx.route, raw);
  try {
    return await freshExtraction(ctx, identity, raw);
  } finally {
    release();
  }
}

async function freshExtraction(ctx: RequestCtx, identity: string, raw: unknown): Promise<Response> {
  const { s, key } = ctx;
  const body = validated(() => parseOrThrow(ExtractRequestSchema, raw, ""));
  if (body.model !== SANDBOX_EXTRACTION_MODEL) {
    throw modelUnavailable(`model: must be ${SANDBOX_EXTRACTION_MODEL}.`);
  }
  const now = s.clock.now();
  const asset = s.assets.reference(key.id, body.videoAssetId, "videoAssetId", ["video"]);
  s.assets.ensureReady([asset], now);
  const bytes = s.assets.bytesOf(asset);
  if (bytes.byteLength >= LIMITS.extraction.videoBytesBelow) {
    throw invalid(`videoAssetId: the video is ${bytes.byteLength} bytes; it must be under 25 MiB.`);
  }
  const duration = await s.assets.durationOf(asset);
  if (duration === undefined) throw invalid("videoAssetId: the video's duration could not be read.");
  if (duration >= LIMITS.extraction.videoSecondsBelow) {
    throw invalid(`videoAssetId: the video lasts ${duration} s; it must be shorter than 120 s.`);
  }
  const { reservationInputTokens, reservationOutputTokens } = LIMITS.extraction;
  const reservation = Math.ceil(
    ((reservationInputTokens + reservationOutputTokens) * GEMS_PER_1K_TOKENS) / 1000,
  );
  admit(key, reservation, body.maxGems, now);
  const prompt = body.prompt ?? "";
  const used = Math.ceil(duration * TOKENS_PER_SECOND) + Math.ceil(prompt.length / 4) + 500;
  const charged = Math.min(reservation, Math.max(1, Math.ceil((used * GEMS_PER_1K_TOKENS) / 1000)));
  key.spends.add({ quoted: reservation, charged, settleAt: now });
  s.stats.dispatch(ctx.route);

  if (prompt.includes(SANDBOX_MARKERS.analysisFailed)) {
    const failed = {
      error: { code: "ANALYSIS_FAILED", message: "The analysis result could not be parsed." },
    };
    s.idem.retain(key.id, identity, ctx.route, raw, { kind: "extraction", status: 409, body: failed });
    return errorResponse(409, failed.error.message, failed.error.code);
  }
  const result = { id: s.nextId("ext_"), extraction: analyse(duration, prompt) };
  s.idem.retain(key.id, identity, ctx.route, raw, { kind: "extraction", status: 200, body: result });
  return json(200, result);
}

export function analyse(duration: number, prompt: string): Record<string, unknown> {
  const round = (n: number): number => Math.round(n * 100) / 100;
  const frameCount = Math.max(1, Math.min(8, Math.floor(duration)));
  const frames = Array.from({ length: frameCount }, (_, i) => ({
    timeSeconds: round((duration * (i + 0.5)) / frameCount),
    description: `Suggested frame ${i + 1} of ${frameCount}.`,
  }));
  const segCount = Math.min(3, frameCount);
  const segments = Array.from({ length: segCount }, (_, i) => ({
    startSeconds: round((duration * i) / segCount),
    endSeconds: round((duration * (i + 1)) / segCount),
    description: `Part ${i + 1} of ${segCount}.`,
  }));
  const focus = prompt.trim() ? ` Focus: ${prompt.trim().slice(0, 200)}` : "";
  return {
    analysis: `Sandbox analysis of ${withArticle(String(round(duration)))} s video in ${segCount} parts.${focus}`,
    durationSeconds: round(duration),
    frames,
    segments,
  };
}
