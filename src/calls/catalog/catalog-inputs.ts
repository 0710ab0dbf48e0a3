/**
 * What a model takes, by its catalog entry: the parameter names its `parameters` list gives, the
 * source image an edit model requires (`requiresSourceImage`), and how many references it takes
 * (`maxReferenceImages`, a video model's `maxReferenceImagesByResolution`, `maxReferenceVideos`,
 * `maxReferenceAudios`) or whether it takes an end frame (`endFrame`). Each refusal names the field,
 * the value and the limit; a capability the entry leaves out judges nothing (the service will).
 * Also the readers of capabilities that catalog-check.ts shares.
 */

import type { Model } from "../../client/schemas.js";
import type { MediaKind } from "../../config/service-limits.js";
import { ArgumentError } from "../../shared/local-refusals.js";

export type Scalar = string | number;

export const show = (v: unknown): string => JSON.stringify(v);
export const listed = (values: readonly unknown[]): string => values.map((v) => String(v)).join(", ");

/** A capability that is a list of strings or numbers; anything else is not read. */
export function capList(m: Model, name: string): Scalar[] | undefined {
  const v = m.capabilities[name];
  if (!Array.isArray(v) || v.length === 0) return undefined;
  return v.every((x) => typeof x === "string" || typeof x === "number") ? (v as Scalar[]) : undefined;
}

export function capNumber(m: Model, name: string): number | undefined {
  const v = m.capabilities[name];
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** A capability that maps values to numbers (`maxReferenceImagesByResolution`). */
function capTable(m: Model, name: string): Record<string, number> | undefined {
  const v = m.capabilities[name];
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  return Object.values(v).every((n) => typeof n === "number") ? (v as Record<string, number>) : undefined;
}

/** The fields of a media request what a model takes can judge. */
export interface InputsChecked {
  parameters?: Record<string, unknown> | undefined;
  referenceAssetIds?: readonly string[] | undefined;
}

/** Refuses a parameter the model's `parameters` list leaves out (`style` on a model without it). */
function checkParameterNames(m: Model, p: Record<string, unknown>): void {
  const allowed = capList(m, "parameters");
  if (allowed === undefined) return;
  for (const name of Object.keys(p)) {
    if (allowed.includes(name)) continue;
    throw new ArgumentError(
      `parameters.${name}`,
      `not a parameter of model ${m.id} (its parameters: ${listed(allowed)})`,
    );
  }
}

/** Refuses more than `max` items of a field, naming the limit and where the catalog says it. */
function atMost(field: string, count: number, m: Model, max: number | undefined, where: string): void {
  if (max === undefined || count <= max) return;
  throw new ArgumentError(field, `${count} given; model ${m.id} takes at most ${max}${where}`);
}

function checkImageInputs(m: Model, p: Record<string, unknown>, refs: number): void {
  if (m.capabilities.requiresSourceImage === true && p.sourceImage === undefined) {
    throw new ArgumentError(
      "parameters.sourceImage",
      `required by model ${m.id} (requiresSourceImage: true in the catalog): the asset ID of the image to edit, from upload_asset or an earlier output`,
    );
  }
  const max = capNumber(m, "maxReferenceImages");
  atMost("referenceAssetIds", refs, m, max, ` (its maxReferenceImages: ${max})`);
}

function checkVideoInputs(m: Model, p: Record<string, unknown>, refs: number): void {
  if (m.capabilities.endFrame === false && p.endFrame !== undefined) {
    throw new ArgumentError(
      "parameters.endFrame",
      `not taken by model ${m.id} (endFrame: false in the catalog)`,
    );
  }
  const byResolution = capTable(m, "maxReferenceImagesByResolution");
  const resolution = typeof p.resolution === "string" ? p.resolution : undefined;
  const atResolution = resolution === undefined ? undefined : byResolution?.[resolution];
  if (atResolution !== undefined && byResolution !== undefined) {
    const table = Object.entries(byResolution).map(([r, n]) => `${r} ${n}`);
    const where = ` at resolution ${resolution} (its maxReferenceImagesByResolution: ${table.join(", ")})`;
    atMost("referenceAssetIds", refs, m, atResolution, where);
  } else {
    const max = capNumber(m, "maxReferenceImages");
    atMost("referenceAssetIds", refs, m, max, ` (its maxReferenceImages: ${max})`);
  }
  const videos =
    (p.referenceVideo === undefined ? 0 : 1) +
    (Array.isArray(p.referenceVideos) ? p.referenceVideos.length : 0);
  const maxVideos = capNumber(m, "maxReferenceVideos");
  const videoField = Array.isArray(p.referenceVideos)
    ? "parameters.referenceVideos"
    : "parameters.referenceVideo";
  atMost(videoField, videos, m, maxVideos, ` (its maxReferenceVideos: ${maxVideos})`);
  const audios = Array.isArray(p.referenceAudios) ? p.referenceAudios.length : 0;
  const maxAudios = capNumber(m, "maxReferenceAudios");
  atMost("parameters.referenceAudios", audios, m, maxAudios, ` (its maxReferenceAudios: ${maxAudios})`);
}

/** Throws an ArgumentError for an input the model does not take. */
export function checkInputs(m: Model, kind: MediaKind, request: InputsChecked): void {
  const p = request.parameters ?? {};
  checkParameterNames(m, p);
  const refs = request.referenceAssetIds?.length ?? 0;
  if (kind === "image") checkImageInputs(m, p, refs);
  else if (kind === "video") checkVideoInputs(m, p, refs);
}
