/** What a validated media request turns into: a quote, the outputs to render, and timings. */
import { FORBIDDEN_PARAMETER_NAMES } from "../client/schemas.js";
import type { AssetKind, AssetRecord, AssetStore } from "./assets.js";
import type { CatalogModel } from "./model-catalog.js";
import { invalid } from "./sandbox-errors.js";
import type { VoiceStore } from "./voices.js";

export interface OutputPlan {
  kind: AssetKind;
  mimeType: string;
  render: () => Uint8Array;
}

export interface MediaPlan {
  quote: number;
  outputs: OutputPlan[];
  /** Sandbox milliseconds spent queued, then processing, at timeScale 1. */
  queuedMs: number;
  processingMs: number;
  /** Assets referenced; all must be ready before the task may be created. */
  refs: AssetRecord[];
}

export interface PlanDeps {
  ownerId: string;
  assets: AssetStore;
  voices: VoiceStore;
}

/** Refuses forbidden and unknown parameter names, naming the field and what the model accepts. */
export function checkParameterNames(params: Record<string, unknown>, m: CatalogModel): void {
  const allowed = (m.capabilities.parameters as string[] | undefined) ?? [];
  for (const name of Object.keys(params)) {
    if ((FORBIDDEN_PARAMETER_NAMES as readonly string[]).includes(name)) {
      throw invalid(`parameters.${name}: not accepted inside parameters.`);
    }
    if (!allowed.includes(name)) {
      throw invalid(
        `parameters.${name}: not supported by model ${m.id} (supported: ${allowed.join(", ") || "none"}).`,
      );
    }
  }
}

export function oneOf<T>(value: T | undefined, allowed: readonly T[], field: string, m: CatalogModel): T {
  if (value === undefined) {
    const first = allowed[0];
    if (first === undefined) throw invalid(`${field}: model ${m.id} offers no values.`);
    return first;
  }
  if (!allowed.includes(value)) {
    throw invalid(
      `${field}: ${JSON.stringify(value)} is not supported by model ${m.id} (supported: ${allowed.join(", ")}).`,
    );
  }
  return value;
}

/** A stable seed for rendering: the same request renders the same bytes. */
export function seedOf(parts: unknown[]): string {
  return JSON.stringify(parts);
}
