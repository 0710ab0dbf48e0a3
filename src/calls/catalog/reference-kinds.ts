/**
 * References of the wrong kind, where an earlier answer of this key already said what the asset is
 * (its upload, or a task whose output it was: src/client/asset-kinds.ts): an image asset passed as
 * the video to analyse, a video as an image reference. Refused before anything is sent; an asset
 * no answer named passes, for the service to judge.
 */
import type { AssetKinds, KnownAsset } from "../../client/asset-kinds.js";
import type { MediaKind } from "../../config/service-limits.js";
import { ArgumentError } from "../../shared/local-refusals.js";
import { withArticle } from "../../shared/wording.js";

type AssetKind = "image" | "video" | "audio";

/** One asset ID of a request, the field it is in, and the kind that field takes. */
export interface Reference {
  field: string;
  id: string;
  expected: AssetKind;
}

export interface ReferencesOf {
  kind: MediaKind | "extraction";
  parameters?: Record<string, unknown> | undefined;
  referenceAssetIds?: readonly string[] | undefined;
  videoAssetId?: string | undefined;
}

/** The asset IDs of a request with the kind each must be (docs/service.md#media-requests). */
export function referencesOf(r: ReferencesOf): Reference[] {
  if (r.kind === "extraction") {
    return r.videoAssetId === undefined
      ? []
      : [{ field: "videoAssetId", id: r.videoAssetId, expected: "video" }];
  }
  const p = r.parameters ?? {};
  const out: Reference[] = [];
  const one = (name: string, expected: AssetKind) => {
    const id = p[name];
    if (typeof id === "string") out.push({ field: `parameters.${name}`, id, expected });
  };
  const many = (name: string, ids: unknown, expected: AssetKind) => {
    if (!Array.isArray(ids)) return;
    ids.forEach((id, i) => {
      if (typeof id === "string") out.push({ field: `${name}[${i}]`, id, expected });
    });
  };
  // Top-level references are visual for image and video, the cover audio for music.
  const visual = r.kind === "audio" ? "audio" : "image";
  many("referenceAssetIds", r.referenceAssetIds, visual);
  if (r.kind === "audio") {
    one("coverAudio", "audio");
    return out;
  }
  one("sourceImage", "image");
  one("endFrame", "image");
  one("referenceVideo", "video");
  many("parameters.referenceVideos", p.referenceVideos, "video");
  many("parameters.referenceAudios", p.referenceAudios, "audio");
  return out;
}

const origin = (known: KnownAsset): string =>
  known.origin.from === "upload" ? "as upload_asset reported it" : `an output of task ${known.origin.taskId}`;

/** Throws an ArgumentError for the first reference an earlier answer shows to be of another kind. */
export function checkReferenceKinds(assets: AssetKinds, references: readonly Reference[]): void {
  for (const ref of references) {
    const known = assets.get(ref.id);
    if (known === undefined || known.kind === ref.expected) continue;
    throw new ArgumentError(
      ref.field,
      `${ref.id} is ${withArticle(known.kind)} asset (${origin(known)}), not ${withArticle(ref.expected)}: ${ref.field} takes ${withArticle(ref.expected)} asset ID`,
    );
  }
}
