/**
 * The paid calls an MCP task can go on with after its process stopped, by tool: each rebuilds
 * its steps from the work the task stored (src/calls/mcp-task/mcp-task-resume.ts). A tool not in
 * the table is refused, never guessed. The call kinds load on the first task taken over, not with
 * the server (a start that lists tools never needs them).
 */
import type { Engine } from "../../mcp/context.js";
import { lazy } from "../../shared/lazy.js";
import { LocalRefusal } from "../../shared/local-refusals.js";
import type { Resumable, Steps } from "../mcp-task/mcp-task-record.js";

const mediaCall = lazy(() => import("./media-call.js"));
const batchCall = lazy(() => import("./batch-steps.js"));
const extractCall = lazy(() => import("./extract-call.js"));

const media = async (engine: Engine, work: Record<string, unknown>): Promise<Steps<unknown>> => {
  const { mediaSteps } = await mediaCall();
  return mediaSteps(engine, work as never) as Steps<unknown>;
};

const TABLE: Readonly<
  Record<string, (engine: Engine, work: Record<string, unknown>) => Promise<Steps<unknown>>>
> = {
  generate_image: media,
  generate_video: media,
  generate_audio: media,
  generate_batch: async (engine, work) => {
    const { batchSteps } = await batchCall();
    return batchSteps(engine, work as never) as Steps<unknown>;
  },
  extract_video: async (engine, work) => {
    const { extractSteps } = await extractCall();
    return extractSteps(engine, work as never) as Steps<unknown>;
  },
};

export const resumable: Resumable = (engine, work) => {
  const tool = typeof work.tool === "string" ? work.tool : "";
  const steps = Object.hasOwn(TABLE, tool) ? TABLE[tool] : undefined;
  if (steps === undefined) {
    return Promise.reject(
      new LocalRefusal(
        "INTERNAL_ERROR",
        `This task's stored work names a tool no task can go on with: "${tool}".`,
        "Call the tool again; list_requests shows whether its request was sent.",
      ),
    );
  }
  return steps(engine, work);
};
