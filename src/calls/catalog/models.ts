/**
 * The model catalog as tools and prompts read it: at most once a minute per key, one read shared by
 * every caller meanwhile, and never longer than a few seconds (it informs estimates, completions and
 * the catalog check before a paid call, catalog-check.ts, which blocks nothing when it cannot be read).
 */
import type { Model } from "../../client/schemas.js";
import { CATALOG_READ_MS } from "../../config/time-limits.js";
import type { Engine } from "../../mcp/context.js";
import { readMemo } from "./read-memo.js";

/** This key's catalog; rejects when it cannot be read, and the next call reads it again. */
export const modelCatalog: (engine: Engine) => Promise<Model[]> = readMemo(
  { ttlMs: 60_000, timeoutMs: CATALOG_READ_MS },
  async (engine: Engine, signal) => (await engine.client.listModels({ signal })).models,
);
