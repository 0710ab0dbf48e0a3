/**
 * What the model catalog rules out, refused before anything is spent or claimed: a model that is
 * not in the catalog, of another kind or `available: false` (for chat too: a text model; for
 * extract_video, a generation model of the catalog instead of the analysis model); a ratio,
 * resolution, duration, audio setting or mode the model's capabilities do not list; more outputs
 * than its maximum; an audio operation the model does not offer; and what the model takes
 * (catalog-inputs.ts: its parameters, a required source image, reference counts). Besides the
 * catalog, a reference of the wrong kind where an earlier answer named the asset
 * (reference-kinds.ts). A catalog entry does not promise that every other configuration works (the
 * service judges those), and a capability the catalog leaves out or words in a shape not read
 * here is left to the service too.
 *
 * Capabilities are free-form (docs/service.md#responses). The shapes read are the ones named there for
 * video (`inputs`, `aspectRatios`, `durations`, `resolutions`, `audio`, reference counts) and, for
 * image and audio models, those of the sandbox's catalog (src/sandbox/model-catalog.ts: `ratios`,
 * `resolutions`, `maxOutputs`, `modes`, `operations`, `parameters`, `requiresSourceImage`,
 * `maxReferenceImages`): a list of strings or numbers, a number, or a flag.
 */

import type { Model } from "../../client/schemas.js";
import { type MediaKind, VOICE_MODEL_ID } from "../../config/service-limits.js";
import type { Engine } from "../../mcp/context.js";
import { ArgumentError, allArgumentErrors } from "../../shared/local-refusals.js";
import { withArticle } from "../../shared/wording.js";
import { capList, capNumber, checkInputs, listed, show } from "./catalog-inputs.js";
import { modelCatalog } from "./models.js";
import { checkReferenceKinds, referencesOf } from "./reference-kinds.js";

/** What a paid call is judged on: media, a chat (`text`) or a video analysis (`extraction`). */
export type CheckedKind = MediaKind | "text" | "extraction";

/** The fields of a request the catalog and earlier answers can judge. */
export interface CatalogChecked {
  model: string;
  parameters?: Record<string, unknown> | undefined;
  operation?: string | undefined;
  referenceAssetIds?: readonly string[] | undefined;
  videoAssetId?: string | undefined;
}

/** Refuses `value` when the capability lists the values and it is not one of them (5 and "5" match). */
function oneOf(m: Model, field: string, value: unknown, names: readonly string[]): void {
  if (value === undefined || (typeof value !== "string" && typeof value !== "number")) return;
  for (const name of names) {
    const allowed = capList(m, name);
    if (allowed === undefined) continue;
    if (allowed.some((a) => String(a) === String(value))) return;
    throw new ArgumentError(
      field,
      `${show(value)} is not offered by model ${m.id} (its ${name}: ${listed(allowed)})`,
    );
  }
}

/** The usable models of `kind`, named in a refusal so the caller can pick one. */
function alternatives(models: readonly Model[], kind: Model["kind"]): string {
  const ids = models.filter((m) => m.kind === kind && m.available !== false).map((m) => m.id);
  return ids.length > 0
    ? `${kind} models in the catalog: ${ids.join(", ")}`
    : `the catalog lists no ${kind} model`;
}

function checkModel(models: readonly Model[], kind: Model["kind"], id: string): Model {
  const m = models.find((x) => x.id === id);
  if (m === undefined) {
    throw new ArgumentError(
      "model",
      `${show(id)} is not in the model catalog (${alternatives(models, kind)})`,
    );
  }
  if (m.kind !== kind) {
    throw new ArgumentError(
      "model",
      `${id} is ${withArticle(m.kind)} model, not ${withArticle(kind)} one (${alternatives(models, kind)})`,
    );
  }
  if (m.available === false) {
    throw new ArgumentError(
      "model",
      `${id} is not available (available: false in the catalog; ${alternatives(models, kind)})`,
    );
  }
  return m;
}

/** Runs every check, keeping each ArgumentError (so one answer names them all); anything else is thrown. */
function collect(checks: ReadonlyArray<() => void>): ArgumentError[] {
  const found: ArgumentError[] = [];
  for (const check of checks) {
    try {
      check();
    } catch (err) {
      if (!(err instanceof ArgumentError)) throw err;
      found.push(err);
    }
  }
  return found;
}

const imageChecks = (m: Model, p: Record<string, unknown>) => [
  () => oneOf(m, "parameters.ratio", p.ratio, ["ratios", "aspectRatios"]),
  () => oneOf(m, "parameters.resolution", p.resolution, ["resolutions"]),
  () => {
    const max = capNumber(m, "maxOutputs");
    if (typeof p.outputCount === "number" && max !== undefined && p.outputCount > max) {
      throw new ArgumentError(
        "parameters.outputCount",
        `${p.outputCount} is more than model ${m.id} makes at once (its maxOutputs: ${max})`,
      );
    }
  },
];

/** The input each video mode needs, in the words of a video model's `inputs`. */
const MODE_INPUT: Record<string, string> = { "text-to-video": "text", "image-to-video": "image" };

function checkVideoMode(m: Model, p: Record<string, unknown>): void {
  oneOf(m, "parameters.mode", p.mode, ["modes"]);
  const inputs = capList(m, "inputs");
  const needs = typeof p.mode === "string" ? MODE_INPUT[p.mode] : undefined;
  if (inputs !== undefined && needs !== undefined && !inputs.includes(needs)) {
    throw new ArgumentError(
      "parameters.mode",
      `${show(p.mode)} needs ${needs} input, which model ${m.id} does not take (its inputs: ${listed(inputs)})`,
    );
  }
}

const videoChecks = (m: Model, p: Record<string, unknown>) => [
  () => checkVideoMode(m, p),
  () => oneOf(m, "parameters.ratio", p.ratio, ["aspectRatios", "ratios"]),
  () => oneOf(m, "parameters.duration", p.duration, ["durations"]),
  () => oneOf(m, "parameters.resolution", p.resolution, ["resolutions"]),
  () => oneOf(m, "parameters.audio", p.audio, ["audio"]),
];

function checkAudio(m: Model, operation: string | undefined): void {
  if (operation === undefined) return;
  const offered = capList(m, "operations");
  // Without a list, the service's own rule (docs/service.md#media-requests): speech and voice_clone
  // are service-voice's, music is not.
  const speech = operation === "speech" || operation === "voice_clone";
  const fits = offered ? offered.includes(operation) : speech === (m.id === VOICE_MODEL_ID);
  if (fits) return;
  const instead = speech ? `use ${VOICE_MODEL_ID}` : "use the music model from list_models";
  const its = offered
    ? `its operations: ${listed(offered)}`
    : speech
      ? "it is not the speech model"
      : "it is the speech model";
  throw new ArgumentError("operation", `${operation} is not offered by model ${m.id} (${its}); ${instead}`);
}

/**
 * extract_video's model is the one analysis model (GENERATION_EXTRACTION_MODEL), which the catalog
 * of generation models need not list: a model the catalog lists as something else is the wrong one.
 */
function checkExtractionModel(models: readonly Model[], id: string, analysisModel: string | undefined): void {
  if (analysisModel === undefined || id === analysisModel) return;
  const m = models.find((x) => x.id === id);
  if (m === undefined) return;
  const what = m.kind === "video" ? "a video generation" : withArticle(m.kind);
  throw new ArgumentError(
    "model",
    `${id} is ${what} model of the catalog, not the video analysis model: extract_video takes ${analysisModel} (GENERATION_EXTRACTION_MODEL); leave model out to use it`,
  );
}

/**
 * Every error the catalog finds in a request, each naming the field, the value and what the catalog
 * allows; the model's first (nothing else can be judged of a model the catalog does not offer).
 * `analysisModel`: the extraction model in force, for kind `extraction`.
 */
export function catalogErrors(
  models: readonly Model[],
  kind: CheckedKind,
  request: CatalogChecked,
  analysisModel?: string,
  inputs = true,
): ArgumentError[] {
  if (kind === "extraction")
    return collect([() => checkExtractionModel(models, request.model, analysisModel)]);
  let m: Model | undefined;
  const model = collect([
    () => {
      m = checkModel(models, kind, request.model);
    },
  ]);
  if (m === undefined || kind === "text") return model;
  const found = m;
  const p = request.parameters ?? {};
  const own =
    kind === "image"
      ? imageChecks(found, p)
      : kind === "video"
        ? videoChecks(found, p)
        : [() => checkAudio(found, request.operation)];
  return collect(inputs ? [...own, () => checkInputs(found, kind, request)] : own);
}

/** Throws one ArgumentError naming every error catalogErrors finds. */
export function checkAgainstCatalog(
  models: readonly Model[],
  kind: CheckedKind,
  request: CatalogChecked,
  analysisModel?: string,
): void {
  const errors = catalogErrors(models, kind, request, analysisModel);
  if (errors.length > 0) throw allArgumentErrors(errors);
}

/**
 * May this call be the replay of a request the ledger still holds (an explicit key it knows, or an
 * open record of this tool and model)? Then the service judges it by its retained outcome, and a
 * catalog that changed since must not stand between the caller and a result already paid for.
 */
export async function mayReplay(
  engine: Engine,
  tool: string,
  model: string,
  key: string | undefined,
): Promise<boolean> {
  try {
    if (key !== undefined)
      return (await engine.ledger.list(engine.keyHash, { idempotencyKey: key })).length > 0;
    const open = await engine.ledger.list(engine.keyHash, { state: "open" });
    return open.some((r) => r.tool === tool && r.model === model);
  } catch {
    // The claim will read the ledger again and say what is wrong with it.
    return true;
  }
}

/** This key's cached catalog, or undefined when it cannot be read (which blocks nothing). */
export async function catalogOrNothing(engine: Engine): Promise<Model[] | undefined> {
  try {
    return await modelCatalog(engine);
  } catch {
    return undefined;
  }
}

/**
 * The check a paid call makes before spending is confirmed and before the ledger's claim: what
 * earlier answers know of its references, then what the catalog rules out. A catalog that cannot
 * be read blocks nothing (the service will judge), and a replay of a request the ledger holds is
 * never refused.
 */
export async function catalogCheck(
  engine: Engine,
  tool: string,
  kind: CheckedKind,
  request: CatalogChecked & { idempotencyKey?: string | undefined },
): Promise<void> {
  const errors = await catalogRefusals(engine, kind, request);
  if (errors.length === 0 || (await mayReplay(engine, tool, request.model, request.idempotencyKey))) return;
  throw allArgumentErrors(errors);
}

/** What the catalog and earlier answers refuse in a request: the model's error first, then the rest. */
async function catalogRefusals(
  engine: Engine,
  kind: CheckedKind,
  request: CatalogChecked,
): Promise<ArgumentError[]> {
  const models = await catalogOrNothing(engine);
  const found =
    models === undefined ? [] : catalogErrors(models, kind, request, engine.config.extractionModel);
  if (kind === "text") return found;
  const refs = collect([() => checkReferenceKinds(engine.client.assets, referencesOf({ ...request, kind }))]);
  return [...found, ...refs];
}
