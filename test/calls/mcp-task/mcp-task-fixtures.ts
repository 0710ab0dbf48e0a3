/** What the MCP task tests share: a media call's work as a task stores it, and waiting for its end. */
import { taskStore } from "../../../src/calls/mcp-task/mcp-task-record.js";
import type { StoredTask } from "../../../src/calls/mcp-task/mcp-task-store.js";
import type { MediaWork } from "../../../src/calls/paid/media-call.js";
import { buildMediaBody } from "../../../src/client/requests.js";
import type { Engine } from "../../../src/mcp/context.js";

/** An image request's work, as the call would hand it to its steps. */
export function imageWork(prompt: string): MediaWork {
  return {
    tool: "generate_image",
    kind: "image",
    operation: undefined,
    built: buildMediaBody("image", { model: "sandbox-image-fast", prompt }),
    idempotencyKey: undefined,
    ceiling: { maxGems: undefined, source: "none" },
    dirs: undefined,
  };
}

/** The task once it is no longer working, read as the key's own. */
export async function finished(engine: Engine, taskId: string): Promise<StoredTask> {
  const store = await taskStore(engine);
  for (let i = 0; i < 200; i++) {
    const rec = await store.read(taskId, engine.keyHash);
    if (rec !== undefined && rec.status !== "working") return rec;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`task ${taskId} did not finish`);
}
