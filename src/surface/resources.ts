/**
 * Resources: the model catalog, a task read afresh, and an output's bytes fetched through
 * a freshly signed URL (signed URLs expire, so links point here rather than at them).
 */

import {
  type McpServer,
  ResourceNotFoundError,
  ResourceTemplate,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { Engine } from "../mcp/context.js";
import { stateWords } from "../mcp/request-view.js";
import { lazy } from "../shared/lazy.js";
import { scrubDeep } from "../shared/scrub.js";
import { byteSize } from "../shared/wording.js";
import { type ArgumentCompleters, completeOutputIndex, completeTaskId } from "./completions.js";

/** Largest output returned inline as a resource blob (base64 in one JSON message). */
export const RESOURCE_MAX_BYTES = 20 * 1024 * 1024;

/** Tasks shown by the task listing: the newest, from the local ledger. */
const LISTED_TASKS = 100;

/** results.ts's describeError, imported on the first failed read rather than with the server. */
const results = lazy(() => import("../mcp/results.js"));
const describeError = async (err: unknown) => (await results()).describeError(err);
/** Loaded on the first read of a task, not with the server: a start that lists tools never needs it. */
const taskView = lazy(() => import("../calls/paid/task-view.js"));

/**
 * Resource reads fail as protocol errors; their message still starts with the code. Something that
 * does not exist (no such task, no such output) is the protocol's resource-not-found error, not an
 * internal one.
 */
async function reading<T>(engine: Engine, uri: URL, run: () => Promise<T>): Promise<T> {
  // The service may echo the key in anything it answers: contents and errors are scrubbed of it.
  const scrub = engine.client.scrub;
  try {
    return scrubDeep(await run(), scrub);
  } catch (err) {
    if (err instanceof ResourceNotFoundError) throw new ResourceNotFoundError(uri.href, scrub(err.message));
    const described = await describeError(err);
    if (described.status === 404) throw new ResourceNotFoundError(uri.href, scrub(described.text));
    throw new Error(scrub(described.text));
  }
}

const json = (uri: URL, value: unknown) => ({
  contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(value, null, 2) }],
});

const one = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? "") : (v ?? ""));

const OUTPUT_TEMPLATE = "generation://tasks/{taskId}/outputs/{index}";
const TASK_TEMPLATE = "generation://tasks/{taskId}";

/** What completion/complete offers for the templates' variables (completions.ts answers them). */
export const TEMPLATE_COMPLETIONS: Readonly<Record<string, ArgumentCompleters>> = {
  [OUTPUT_TEMPLATE]: {
    taskId: (engine, value) => completeTaskId(engine, value),
    index: (engine, value, given) => completeOutputIndex(engine, value, given.taskId),
  },
  [TASK_TEMPLATE]: { taskId: (engine, value) => completeTaskId(engine, value) },
};

export function registerResources(server: McpServer, engine: Engine, o: { maxBytes?: number } = {}): void {
  registerModels(server, engine);
  registerOutput(server, engine, o.maxBytes ?? RESOURCE_MAX_BYTES);
  registerTask(server, engine);
}

function registerModels(server: McpServer, engine: Engine): void {
  server.registerResource(
    "models",
    "generation://models",
    {
      title: "Model catalog",
      description:
        "The reviewed models this key can use, with kinds, baseGems hints and capabilities (JSON).",
      mimeType: "application/json",
    },
    (uri, ctx: ServerContext) =>
      reading(engine, uri, async () =>
        json(uri, await engine.client.listModels({ signal: ctx.mcpReq.signal })),
      ),
  );
}

function registerOutput(server: McpServer, engine: Engine, maxBytes: number): void {
  server.registerResource(
    "task-output",
    new ResourceTemplate(OUTPUT_TEMPLATE, { list: undefined }),
    {
      title: "Task output",
      description: `An output's bytes with its MIME type, fetched through a freshly signed URL (up to ${byteSize(maxBytes)}; larger ones are saved with save_outputs or downloaded from the URL poll_task gives).`,
    },
    (uri, vars, ctx: ServerContext) =>
      reading(engine, uri, async () => {
        const taskId = decodeURIComponent(one(vars.taskId));
        const index = Number(one(vars.index));
        const task = await engine.client.getTask(taskId, { signal: ctx.mcpReq.signal });
        const out = task.outputs.find((o) => o.index === index);
        if (!out?.asset) {
          throw new ResourceNotFoundError(
            uri.href,
            `NOT_FOUND: task ${taskId} has no downloadable output #${one(vars.index)} (status ${task.status}). Next: call poll_task to see its outputs.`,
          );
        }
        let fetched: { bytes: Uint8Array; mimeType: string };
        try {
          fetched = await engine.client.fetchOutput(out.asset.url, {
            signal: ctx.mcpReq.signal,
            maxBytes,
          });
        } catch (err) {
          const { code, text } = await describeError(err);
          throw new Error(
            `${code === "INTERNAL_ERROR" ? "OUTPUT_TOO_LARGE_OR_UNREADABLE" : code}: output #${index} of task ${taskId} could not be read inline (limit ${byteSize(maxBytes)}): ${text} Next: call save_outputs with the task ID, or download it from the signed URL that poll_task returns.`,
          );
        }
        return {
          contents: [
            {
              uri: uri.href,
              mimeType: out.asset.mimeType || fetched.mimeType,
              blob: Buffer.from(fetched.bytes).toString("base64"),
            },
          ],
        };
      }),
  );
}

function registerTask(server: McpServer, engine: Engine): void {
  server.registerResource(
    "task",
    new ResourceTemplate(TASK_TEMPLATE, {
      // The tasks this key submitted, from the local ledger: the service has no task listing.
      list: async () => {
        // Hosts list resources when they connect: a ledger that cannot be read lists no tasks
        // rather than failing the whole listing.
        const records = await engine.ledger.list(engine.keyHash, { limit: LISTED_TASKS }).catch(() => []);
        const resources = records
          .filter((r) => r.taskId)
          .map((r) => ({
            uri: `generation://tasks/${encodeURIComponent(r.taskId as string)}`,
            name: `task ${r.taskId}`,
            description: `${r.tool}${r.model ? ` ${r.model}` : ""}, ${stateWords(r)}; identity ${r.idempotencyKey}`,
            mimeType: "application/json",
          }));
        return { resources };
      },
    }),
    {
      title: "Generation task",
      description:
        "A media task as it stands now, read afresh from the service (JSON), with current signed URLs and each output's asset ID (what sourceImage and referenceAssetIds take).",
      mimeType: "application/json",
    },
    (uri, vars, ctx: ServerContext) =>
      reading(engine, uri, async () => {
        const { assetUses, outputName, outputUri } = await taskView();
        const task = await engine.client.getTask(decodeURIComponent(one(vars.taskId)), {
          signal: ctx.mcpReq.signal,
        });
        const links = task.outputs.flatMap((o) =>
          o.asset
            ? [
                {
                  uri: outputUri(task.id, o.index),
                  name: outputName(task.id, o.index, o.asset.mimeType),
                  assetId: o.asset.id,
                  use: `asset ID ${o.asset.id}: use it ${assetUses(o.asset.mimeType)}`,
                },
              ]
            : [],
        );
        return json(uri, { task, outputs: links });
      }),
  );
}

export type { McpServer };
