/**
 * The model catalog as tools and prompts read it: at most once a minute per key, one read shared by
 * every caller meanwhile, and never longer than a few seconds (it only informs estimates and
 * completions; nothing waits on it for money's sake).
 */
import type { Model } from "../client/schemas.js";
import { CATALOG_READ_MS } from "../config/time-limits.js";
import type { Engine } from "../mcp/context.js";

const CACHE_MS = 60_000;

const catalogs = new WeakMap<Engine, { at: number; models: Promise<Model[]> }>();

/** This key's catalog; rejects when it cannot be read, and the next call reads it again. */
export function modelCatalog(engine: Engine): Promise<Model[]> {
  const hit = catalogs.get(engine);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.models;
  const models = engine.client
    .listModels({ signal: AbortSignal.timeout(CATALOG_READ_MS) })
    .then((l) => l.models);
  catalogs.set(engine, { at: Date.now(), models });
  models.catch(() => {
    if (catalogs.get(engine)?.models === models) catalogs.delete(engine);
  });
  return models;
}
