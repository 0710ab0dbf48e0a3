/** POST /api/generate/{image,video,audio}: idempotent media submissions that create tasks. */

import { MediaRequestSchema, parseOrThrow } from "../client/schemas.js";
import type { MediaKind } from "../config/service-limits.js";
import type { AssetRecord } from "./assets.js";
import { readJson, validated } from "./body.js";
import { requireIdempotencyKey } from "./idempotency.js";
import { admit } from "./keys.js";
import { findModel } from "./model-catalog.js";
import type { PlanDeps } from "./plan.js";
import { planAudio } from "./rules-audio.js";
import { planImage, planVideo } from "./rules-visual.js";
import { invalid, invalidReference, json, notFound } from "./sandbox-errors.js";
import type { RequestCtx } from "./state.js";

/** Generous for a 30,000-character prompt plus parameters; larger bodies get 413. */
export const MEDIA_BODY_LIMIT = 256 * 1024;

export async function submitMedia(ctx: RequestCtx, kind: MediaKind): Promise<Response> {
  const { s, key } = ctx;
  const identity = requireIdempotencyKey(ctx.req);
  const raw = await readJson(ctx.req, MEDIA_BODY_LIMIT);
  const prior = s.idem.lookup(key.id, identity, ctx.route, raw);
  const now = s.clock.now();
  if (prior?.kind === "task") {
    const task = s.tasks.owned(key.id, prior.taskId);
    if (!task) throw notFound("The retained task no longer exists.");
    return json(200, { task: s.tasks.view(task, ctx.origin, now), created: false });
  }
  const release = s.idem.hold(key.id, identity, ctx.route, raw);
  try {
    return await freshMedia(ctx, kind, identity, raw, now);
  } finally {
    release();
  }
}

async function freshMedia(
  ctx: RequestCtx,
  kind: MediaKind,
  identity: string,
  raw: unknown,
  now: number,
): Promise<Response> {
  const { s, key } = ctx;
  const body = validated(() => parseOrThrow(MediaRequestSchema, raw, ""));
  if (kind !== "audio" && body.operation !== undefined) {
    throw invalid("operation: only for audio submissions.");
  }
  const model = findModel(body.model, kind);
  const deps: PlanDeps = { ownerId: key.id, assets: s.assets, voices: s.voices };
  const plan =
    kind === "image"
      ? planImage(body, model, deps)
      : kind === "video"
        ? planVideo(body, model, deps)
        : planAudio(body, model, deps);
  s.assets.ensureReady(plan.refs, now);
  await checkReferenceDurations(ctx, model.capabilities.referenceDurations, plan.refs);
  const fault = ctx.fault;
  if (fault && "kind" in fault && fault.kind === "reprice") plan.quote = Math.ceil(plan.quote * fault.factor);
  admit(key, plan.quote, body.maxGems, now);
  const task = s.tasks.create(key, body.prompt, plan, now);
  s.idem.retain(key.id, identity, ctx.route, raw, { kind: "task", taskId: task.id });
  s.stats.dispatch(ctx.route);
  return json(202, { task: s.tasks.view(task, ctx.origin, now), created: true });
}

/** Where the model bounds reference lengths (video and audio references), reads them from the bytes. */
async function checkReferenceDurations(ctx: RequestCtx, bound: unknown, refs: AssetRecord[]): Promise<void> {
  const maxSeconds = (bound as { maxSeconds?: number } | undefined)?.maxSeconds;
  if (maxSeconds === undefined) return;
  for (const ref of refs) {
    if (ref.kind === "image") continue;
    const seconds = await ctx.s.assets.durationOf(ref);
    if (seconds === undefined || seconds > maxSeconds) {
      throw invalidReference(
        `asset ${ref.id}: reference ${ref.kind} must last at most ${maxSeconds} s` +
          (seconds === undefined ? " (its duration could not be read)." : ` (it lasts ${seconds} s).`),
      );
    }
  }
}
