/**
 * Completions (`completion/complete`): task IDs from this key's ledger, output indexes from the
 * task itself, and prompt arguments from the catalog (model IDs of one kind, voice IDs).
 * A completion is a convenience: anything that cannot be read answers with no values, never
 * an error, and every service read is bounded so a host's typing never waits long. Each server
 * answers them with one handler over its engine, from tables every server shares (the prompts'
 * and the resource templates'), so no schema or callback is built per server.
 */

import { type McpServer, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { modelCatalog } from "../calls/catalog/models.js";
import { readMemo } from "../calls/catalog/read-memo.js";
import type { Model } from "../client/schemas.js";
import type { Engine } from "../mcp/context.js";
import { lazy } from "../shared/lazy.js";

/** Hosts show a short list; the protocol caps a result at 100 values. */
const MAX_VALUES = 100;
/** A completion waits at most this long for the service. */
const READ_TIMEOUT_MS = 5000;
/** Catalog and voices change rarely: one read serves a burst of keystrokes. */
const CACHE_MS = 60_000;

const startsWith = (value: string, prefix: string) => value.toLowerCase().startsWith(prefix.toLowerCase());
const limit = () => ({ signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
/** Values come from the service or the ledger, which may quote the key: scrubbed before they are shown. */
const shown = (engine: Engine, values: string[]): string[] => values.map((v) => engine.client.scrub(v));

/** This key's task IDs, newest first, that start with `prefix`. */
export async function completeTaskId(engine: Engine, prefix: string): Promise<string[]> {
  const records = await engine.ledger.list(engine.keyHash).catch(() => []);
  const ids: string[] = [];
  for (const r of records) {
    if (r.taskId !== undefined && startsWith(r.taskId, prefix) && !ids.includes(r.taskId)) ids.push(r.taskId);
  }
  return shown(engine, ids.slice(0, MAX_VALUES));
}

/** The indexes of a task's outputs that have an asset (the ones the output resource can read). */
export async function completeOutputIndex(
  engine: Engine,
  prefix: string,
  taskId: string | undefined,
): Promise<string[]> {
  if (!taskId) return [];
  try {
    const task = await engine.client.getTask(decodeURIComponent(taskId), limit());
    return task.outputs
      .filter((o) => o.asset)
      .map((o) => String(o.index))
      .filter((i) => i.startsWith(prefix));
  } catch {
    return [];
  }
}

/** The model catalog (catalog/models.ts: read once a minute per key); undefined when it cannot be read. */
export const catalogOf = (engine: Engine): Promise<Model[] | undefined> =>
  modelCatalog(engine).catch(() => undefined);

/** Model IDs of one kind (and, for audio, one use), usable ones first; `available: false` left out. */
export async function completeModelId(
  engine: Engine,
  kind: Model["kind"],
  prefix: string,
  only?: (m: Model) => boolean,
): Promise<string[]> {
  const models = (await catalogOf(engine)) ?? [];
  const ids = models
    .filter(
      (m) => m.kind === kind && m.available !== false && (only?.(m) ?? true) && startsWith(m.id, prefix),
    )
    .map((m) => m.id);
  return shown(engine, ids.slice(0, MAX_VALUES));
}

/** Pages of voices read per scope for completions: 1,000 voices at most, in well under READ_TIMEOUT_MS. */
const VOICE_PAGES = 20;

/** Every voice ID of one scope, page after page while more follow (at most VOICE_PAGES). */
/** schemas.ts is not loaded with the server (it is a few milliseconds of a cold start). */
const schemas = lazy(() => import("../client/schemas.js"));

async function allVoiceIds(
  engine: Engine,
  scope: "mine" | "explore",
  signal: AbortSignal,
): Promise<string[]> {
  const { voicesFollow } = await schemas();
  const ids: string[] = [];
  for (let page = 1; page <= VOICE_PAGES; page++) {
    const list = await engine.client.listVoices({ scope, page }, { signal });
    ids.push(...list.voices.map((v) => v.id));
    if (!voicesFollow(list)) break;
  }
  return ids;
}

/** Voice IDs, the key's own first, then the approved public ones, every page; read once a minute. */
const voiceIds = readMemo({ ttlMs: CACHE_MS, timeoutMs: READ_TIMEOUT_MS }, async (engine: Engine, signal) => {
  const [mine, explore] = await Promise.all([
    allVoiceIds(engine, "mine", signal),
    allVoiceIds(engine, "explore", signal),
  ]);
  return [...new Set([...mine, ...explore])];
});

/**
 * Voice IDs that start with `prefix`; none when the voices cannot be read. All of them: the SDK
 * sends the first 100 with the true `total` and `hasMore`.
 */
export async function completeVoiceId(engine: Engine, prefix: string): Promise<string[]> {
  const ids = await voiceIds(engine).catch(() => []);
  return shown(
    engine,
    ids.filter((id) => startsWith(id, prefix)),
  );
}

/** Completes one argument over an engine; `given` are the arguments already given. */
export type Completer = (engine: Engine, value: string, given: Record<string, string>) => Promise<string[]>;
/** The completers of one prompt's or one resource template's arguments, by argument name. */
export type ArgumentCompleters = Readonly<Record<string, Completer>>;

export interface CompletionTables {
  /** By prompt name. */
  prompts: Readonly<Record<string, ArgumentCompleters>>;
  /** By URI template, as resources/templates/list gives it. */
  templates: Readonly<Record<string, ArgumentCompleters>>;
}

/**
 * Answers completion/complete on `server` over `engine`, as the SDK would for completable
 * arguments: a prompt or template it does not know is an invalid-params error, an argument with
 * no completer completes to nothing, and a result carries at most MAX_VALUES values.
 */
export function answerCompletions(server: McpServer, engine: Engine, tables: CompletionTables): void {
  server.server.setRequestHandler("completion/complete", async (request) => {
    const { ref, argument, context } = request.params;
    const known = ref.type === "ref/prompt" ? tables.prompts[ref.name] : tables.templates[ref.uri];
    if (known === undefined) {
      const what = ref.type === "ref/prompt" ? `Prompt ${ref.name}` : `Resource template ${ref.uri}`;
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${what} not found`);
    }
    const complete = known[argument.name];
    if (complete === undefined) return { completion: { values: [], hasMore: false } };
    const values = await complete(engine, argument.value, context?.arguments ?? {});
    return {
      completion: {
        values: values.slice(0, MAX_VALUES),
        total: values.length,
        hasMore: values.length > MAX_VALUES,
      },
    };
  });
}
