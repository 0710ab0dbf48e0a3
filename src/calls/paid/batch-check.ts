/**
 * Step 1 of generate_batch (batch-call.ts): every item checked as a call of its own tool would be,
 * and every error of every item reported in one INVALID_ARGUMENT, in item order, an unknown model
 * first: its schema's (the tool file parsed it, src/tools/generate_batch.ts), the fields a batch
 * sets itself (wait, save, idempotencyKey), the catalog's (catalog-check.ts) and the operator's
 * per-request cap against the item's estimate. Nothing is sent and nothing recorded on a refusal.
 */
import { type Prepared, prepareMediaBody } from "../../client/requests.js";
import type { MediaRequest } from "../../client/schemas.js";
import type { MediaKind } from "../../config/service-limits.js";
import type { Engine } from "../../mcp/context.js";
import { ArgumentError, LocalRefusal } from "../../shared/local-refusals.js";
import { gems } from "../../shared/wording.js";
import { catalogCheck } from "../catalog/catalog-check.js";
import type { MediaArgs } from "./media-call.js";
import { estimateGems } from "./spending.js";

export const BATCH_TOOLS = ["generate_image", "generate_video", "generate_audio"] as const;
export type BatchTool = (typeof BATCH_TOOLS)[number];
export const KIND_OF: Readonly<Record<BatchTool, MediaKind>> = {
  generate_image: "image",
  generate_video: "video",
  generate_audio: "audio",
};

/** One item as the tool file parsed it: its tool's arguments, or the errors its schema found. */
export type ItemInput = { tool: BatchTool } & (
  | { args: MediaArgs }
  | { errors: ArgumentError[]; model?: unknown }
);

/** An item checked: its body prepared without a ceiling, its estimate, and its own maxGems. */
export interface CheckedItem {
  tool: BatchTool;
  kind: MediaKind;
  prepared: Prepared<MediaRequest>;
  estimate: number | undefined;
  given: number | undefined;
}

/** Step 1: every item's errors (its schema's, its fields the batch sets, the catalog's, the cap). */
export async function checkItems(engine: Engine, inputs: ItemInput[]): Promise<CheckedItem[]> {
  // Each item's errors apart, listed in item order once every check is done.
  const found: ArgumentError[][] = inputs.map(() => []);
  const checked = await Promise.all(
    inputs.map(async (input, i): Promise<CheckedItem | undefined> => {
      const at = `items[${i}].arguments`;
      const errors = found[i] ?? [];
      if ("errors" in input) {
        // An unknown model is named first, before what its schema found.
        errors.push(...(await unknownModel(engine, input.tool, input.model, at)), ...input.errors);
        return undefined;
      }
      const { wait, idempotencyKey, save, approval, maxGems, ...request } = input.args;
      const own = { wait, idempotencyKey, save, approval };
      for (const [field, value] of Object.entries(own)) {
        if (value !== undefined) errors.push(new ArgumentError(`${at}.${field}`, BATCH_SETS[field] ?? ""));
      }
      const kind = KIND_OF[input.tool];
      try {
        await catalogCheck(engine, input.tool, kind, request);
        const prepared = prepareMediaBody(kind, request);
        const estimate = (await estimateGems(engine, request.model, request.parameters ?? {}))?.gems;
        const cap = engine.config.maxGems;
        if (cap !== undefined && estimate !== undefined && estimate > cap) {
          throw new ArgumentError(
            "model",
            `the catalog's estimate for this item is about ${gems(estimate)}, above the operator's cap of ${gems(cap)} per request (GENERATION_MAX_GEMS); ask for less (fewer outputs, a lower resolution, a cheaper model)`,
          );
        }
        return { tool: input.tool, kind, prepared, estimate, given: maxGems };
      } catch (err) {
        if (!(err instanceof ArgumentError)) throw err;
        errors.push(new ArgumentError(`${at}.${err.field}`, err.detail));
        return undefined;
      }
    }),
  );
  const errors = found.flat();
  if (errors.length > 0) throw itemErrors(errors);
  return checked.filter((c): c is CheckedItem => c !== undefined);
}

/** The catalog's refusal of an item's model alone (unknown, of another kind, unavailable), if any. */
async function unknownModel(
  engine: Engine,
  tool: BatchTool,
  model: unknown,
  at: string,
): Promise<ArgumentError[]> {
  if (typeof model !== "string" || model === "") return [];
  try {
    await catalogCheck(engine, tool, KIND_OF[tool], { model });
    return [];
  } catch (err) {
    const ofModel = err instanceof ArgumentError && err.field === "model";
    return ofModel ? [new ArgumentError(`${at}.model`, err.detail)] : [];
  }
}

const BATCH_SETS: Record<string, string> = {
  wait: "a batch has one wait: set wait on generate_batch itself",
  idempotencyKey:
    "each item's identity is derived from the batch's: set idempotencyKey on generate_batch itself",
  save: "a batch saves nothing itself: call save_outputs with each finished task's ID",
  approval:
    "a batch has one approval, for its total: pass the batch's quote token as approval on generate_batch itself",
};

/** Every error of every item, in one refusal: nothing was sent, nothing recorded. */
function itemErrors(errors: ArgumentError[]): LocalRefusal {
  const lines = errors.map((e) => e.message);
  const head = errors.length === 1 ? "1 error" : `${errors.length} errors`;
  return new LocalRefusal(
    "INVALID_ARGUMENT",
    `${head} in the batch's items, so no item was sent: ${lines.join("; ")}`,
    "Fix every named field and call generate_batch again; nothing was sent, nothing was recorded or charged.",
  );
}
