/**
 * One paid video analysis (extract_video), read top to bottom: the steps of paid-call.ts, and the
 * analysis with its suggested frames and segments as the answer. For a client that takes MCP
 * tasks, what follows the claim (`extractSteps`) runs in a task's background instead.
 */
import { endpointOf } from "../../client/endpoints.js";
import { buildUnder, prepareExtractBody } from "../../client/requests.js";
import type { ExtractionResponse } from "../../client/schemas.js";
import { LIMITS } from "../../config/service-limits.js";
import type { RunResult } from "../../ledger/open-ledger.js";
import { defaultBudget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import type { ToolOutcome } from "../../mcp/define-tool.js";
import { Questions } from "../../mcp/questions.js";
import { okResult } from "../../mcp/results.js";
import { catalogCheck } from "../catalog/catalog-check.js";
import { handBack, type Steps } from "../mcp-task/mcp-task-background.js";
import { type Built, checkArguments, deliver, refused, sending, spendingNotes } from "./paid-call.js";
import { type Ceiling, confirmSpending } from "./spending.js";

export interface ExtractArgs {
  videoAssetId: string;
  prompt?: string | undefined;
  model?: string | undefined;
  maxGems?: number | undefined;
  idempotencyKey?: string | undefined;
  approval?: string | undefined;
}

export async function extractCall(args: ExtractArgs, ctx: ToolContext, engine: Engine): Promise<ToolOutcome> {
  const { idempotencyKey, maxGems, approval, ...rest } = args;
  const budget = defaultBudget();
  const model = rest.model ?? engine.config.extractionModel;
  let ceiling: Ceiling | undefined;
  try {
    // 1. Check the arguments: a catalog model that is not the analysis model, a video asset an
    // earlier answer showed to be of another kind; then the body's own fields.
    const checked = await checkArguments(
      () => prepareExtractBody({ ...rest, model }),
      () =>
        catalogCheck(engine, "extract_video", "extraction", {
          model,
          videoAssetId: rest.videoAssetId,
          idempotencyKey,
        }),
    );
    // 2. Confirm spending: analysis has no estimate, so the threshold (if any) travels as the ceiling.
    const q = new Questions(ctx, { engine, tool: "extract_video", args });
    ceiling = await confirmSpending(engine, ctx, q, {
      tool: "extract_video",
      model,
      given: maxGems,
      limit: LIMITS.textMaxGems,
      args: { ...args },
      approval,
    });
    if (q.pending) return await q.result();
    // 3. Build the body once under the confirmed ceiling.
    const built = buildUnder(checked, ceiling.maxGems);
    const steps = extractSteps(engine, { built, idempotencyKey, ceiling });
    // A client that takes MCP tasks gets one as soon as the claim is durable: steps 3 to 5 then run
    // in the task's background, and tasks/get carries the result.
    if (ctx.takesTasks === true) return await handBack(engine, steps, ctx.taskForm, ctx.notifyTaskStatus);
    // 3. Claim the identity with the bytes, then send them within the budget.
    const run = await steps.send(ctx, budget);
    // 4. Present the analysis; 5. deliver, marked once the transport wrote it.
    return deliver(ctx, run, await steps.present(run, { ctx, budget, waitSeconds: 0 }));
  } catch (err) {
    return refused(engine, err, ceiling);
  } finally {
    budget.release();
  }
}

/** An analysis's request as a task keeps it (JSON): enough to rebuild its steps anywhere. */
export interface ExtractWork {
  built: Built;
  idempotencyKey: string | undefined;
  ceiling: Ceiling;
}

/** What follows the claim of an analysis: send (the answer is the analysis) and present it. */
export function extractSteps(engine: Engine, work: ExtractWork): Steps<ExtractionResponse> {
  const { body, bytes } = work.built;
  return {
    work: {
      tool: "extract_video",
      ...work,
      built: { body: { model: body.model, maxGems: body.maxGems }, bytes },
    },
    send: sending(engine, {
      tool: "extract_video",
      endpoint: endpointOf("extraction"),
      built: work.built,
      idempotencyKey: work.idempotencyKey,
      send: (identity, bytes, signal) =>
        engine.client.extractVideo(bytes, identity, signal ? { signal } : {}),
      ref: (r) => ({ responseId: r.id }),
    }),
    facts: () => ({}),
    present: async (run) => present(engine, run, work.ceiling),
    refuse: (err) => refused(engine, err, work.ceiling),
  };
}

function present(engine: Engine, run: RunResult<ExtractionResponse>, ceiling: Ceiling): ToolOutcome {
  const { id, extraction } = run.result;
  const analysis =
    typeof extraction.analysis === "string"
      ? extraction.analysis
      : JSON.stringify(extraction.analysis, null, 2);
  const text = [
    `Extraction ${id} of a video of ${extraction.durationSeconds} s (identity ${run.identity}).`,
    ...spendingNotes(engine, run, ceiling, "prompt"),
    `Analysis:\n${analysis}`,
    `Frames (suggested times, not images): ${JSON.stringify(extraction.frames)}`,
    extraction.segments ? `Segments: ${JSON.stringify(extraction.segments)}` : undefined,
  ].filter((l): l is string => l !== undefined);
  return okResult(text.join("\n"), { idempotencyKey: run.identity, created: !run.reused, id, extraction });
}
