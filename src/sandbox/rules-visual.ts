/** Validation, quotes and outputs for image and video submissions, driven by model capabilities. */
import {
  ImageParametersSchema,
  type MediaRequest,
  parseOrThrow,
  VideoParametersSchema,
} from "../client/schemas.js";
import type { AssetRecord } from "./assets.js";
import { validated } from "./body.js";
import { renderVideo } from "./media/mp4.js";
import { renderImage } from "./media/png.js";
import { type CatalogModel, capList, capNumber } from "./model-catalog.js";
import { checkParameterNames, type MediaPlan, oneOf, type PlanDeps, seedOf } from "./plan.js";
import { invalid } from "./sandbox-errors.js";

/** Video's price per resolution, internal to the sandbox (video entries publish no price). */
const VIDEO_RESOLUTION_FACTOR: Record<string, number> = { "720p": 1, "1080p": 2 };

/**
 * An image's quote from what the catalog publishes and nothing else: baseGems × outputCount ×
 * the model's `resolutionMultipliers` entry for the resolution (1 where it lists none), so a client
 * that estimates from the catalog (src/calls/paid/spending.ts) gets the quote it asked the user about.
 */
function imageQuote(m: CatalogModel, resolution: string, count: number): number {
  const multipliers = m.capabilities.resolutionMultipliers as Record<string, number> | undefined;
  return Math.ceil((m.baseGems ?? 1) * count * (multipliers?.[resolution] ?? 1));
}

export function planImage(body: MediaRequest, m: CatalogModel, d: PlanDeps): MediaPlan {
  const p = validated(() => parseOrThrow(ImageParametersSchema, body.parameters, "parameters"));
  checkParameterNames(p, m);
  const ratio = oneOf(p.ratio, capList(m, "ratios"), "parameters.ratio", m);
  const resolution = oneOf(p.resolution, capList(m, "resolutions"), "parameters.resolution", m);
  const maxOutputs = capNumber(m, "maxOutputs", 1);
  const count = p.outputCount ?? 1;
  if (count > maxOutputs) {
    throw invalid(`parameters.outputCount: ${count} exceeds model ${m.id}'s maximum of ${maxOutputs}.`);
  }
  if (p.variant !== undefined) oneOf(p.variant, capList(m, "variants"), "parameters.variant", m);
  if (p.background !== undefined) oneOf(p.background, capList(m, "backgrounds"), "parameters.background", m);
  const refs: AssetRecord[] = [];
  if (m.capabilities.requiresSourceImage === true && p.sourceImage === undefined) {
    throw invalid(`parameters.sourceImage: model ${m.id} edits an image and requires an owned source image.`);
  }
  if (p.sourceImage !== undefined) {
    refs.push(d.assets.reference(d.ownerId, p.sourceImage, "parameters.sourceImage", ["image"]));
  }
  const maxRefs = capNumber(m, "maxReferenceImages");
  if (body.referenceAssetIds.length > maxRefs) {
    throw invalid(`referenceAssetIds: model ${m.id} takes at most ${maxRefs} reference images.`);
  }
  body.referenceAssetIds.forEach((id, i) => {
    refs.push(d.assets.reference(d.ownerId, id, `referenceAssetIds[${i}]`, ["image"]));
  });
  const quote = imageQuote(m, resolution, count);
  const outputs = Array.from({ length: count }, (_, i) => ({
    kind: "image" as const,
    mimeType: "image/png",
    render: () => renderImage(seedOf([m.id, body.prompt, p, i]), ratio),
  }));
  return { quote, outputs, queuedMs: 1_000, processingMs: 2_000, refs };
}

export function planVideo(body: MediaRequest, m: CatalogModel, d: PlanDeps): MediaPlan {
  const p = validated(() => parseOrThrow(VideoParametersSchema, body.parameters, "parameters"));
  checkParameterNames(p, m);
  if (p.mode === undefined) {
    throw invalid(`parameters.mode: required; one of ${capList(m, "modes").join(", ")}.`);
  }
  const mode = oneOf(p.mode, capList(m, "modes"), "parameters.mode", m);
  const duration = oneOf(p.duration, capList<number>(m, "durations"), "parameters.duration", m);
  const ratio = oneOf(p.ratio, capList(m, "aspectRatios"), "parameters.ratio", m);
  const resolution = oneOf(p.resolution, capList(m, "resolutions"), "parameters.resolution", m);
  const audioValue =
    typeof p.audio === "boolean" ? (p.audio ? "on" : "off") : (p.audio as string | undefined);
  const audio = oneOf(audioValue, capList(m, "audio"), "parameters.audio", m);
  const refs: AssetRecord[] = [];
  const ref = (id: string, field: string, kind: "image" | "video" | "audio"): void => {
    refs.push(d.assets.reference(d.ownerId, id, field, [kind]));
  };
  if (mode === "image-to-video") {
    if (p.sourceImage === undefined) {
      throw invalid("parameters.sourceImage: image-to-video needs an owned image asset as the first frame.");
    }
    ref(p.sourceImage, "parameters.sourceImage", "image");
  } else if (p.sourceImage !== undefined) {
    throw invalid("parameters.sourceImage: only for mode image-to-video.");
  }
  if (p.endFrame !== undefined) {
    if (m.capabilities.endFrame !== true)
      throw invalid(`parameters.endFrame: not supported by model ${m.id}.`);
    ref(p.endFrame, "parameters.endFrame", "image");
  }
  const videos = [...(p.referenceVideo ? [p.referenceVideo] : []), ...(p.referenceVideos ?? [])];
  const maxVideos = capNumber(m, "maxReferenceVideos");
  if (videos.length > maxVideos) {
    throw invalid(`parameters.referenceVideos: model ${m.id} takes at most ${maxVideos} reference videos.`);
  }
  for (const [i, id] of videos.entries()) ref(id, `parameters.referenceVideos[${i}]`, "video");
  const audios = p.referenceAudios ?? [];
  const maxAudios = capNumber(m, "maxReferenceAudios");
  if (audios.length > maxAudios) {
    throw invalid(`parameters.referenceAudios: model ${m.id} takes at most ${maxAudios} reference audios.`);
  }
  for (const [i, id] of audios.entries()) ref(id, `parameters.referenceAudios[${i}]`, "audio");
  const byRes = m.capabilities.maxReferenceImagesByResolution as Record<string, number> | undefined;
  const maxImages = byRes?.[resolution] ?? capNumber(m, "maxReferenceImages");
  if (body.referenceAssetIds.length > maxImages) {
    throw invalid(
      `referenceAssetIds: model ${m.id} takes at most ${maxImages} reference images at ${resolution}.`,
    );
  }
  for (const [i, id] of body.referenceAssetIds.entries()) ref(id, `referenceAssetIds[${i}]`, "image");
  const perSecond = m.pricing.perSecond ?? 5;
  const quote = Math.ceil(
    perSecond * duration * (VIDEO_RESOLUTION_FACTOR[resolution] ?? 1) * (audio === "on" ? 1.5 : 1),
  );
  const seed = seedOf([m.id, body.prompt, p]);
  return {
    quote,
    outputs: [{ kind: "video", mimeType: "video/mp4", render: () => renderVideo(seed, duration, ratio) }],
    queuedMs: 2_000,
    processingMs: 8_000,
    refs,
  };
}
