/**
 * What the transports follow tasks through when a 2026-07-28 listen names them
 * (src/mcp/mcp-task-wire-listen.ts): the calls' watch (src/calls/mcp-task/mcp-task-watch.ts) over the
 * engine's store, with the paid calls' table of steps so a task whose process stopped is taken
 * over. Loaded on the first such listen, not with the server.
 */
import type { Engine } from "../mcp/context.js";
import type { TaskFeed } from "../mcp/mcp-task-wire-listen.js";
import { lazy } from "../shared/lazy.js";

const watch = lazy(() => import("../calls/mcp-task/mcp-task-watch.js"));
const steps = lazy(async () => (await import("../calls/paid/resumable.js")).resumable);

export function taskFeedFor(engine: Engine): TaskFeed {
  return async (taskIds, hooks) => (await watch()).watchTasks(engine, await steps(), taskIds, hooks);
}
