/**
 * One paid chat call, read top to bottom: the steps of paid-call.ts, with the answer streamed
 * (so progress can follow the text as it arrives) and given back whole.
 */

import { endpointOf } from "../../client/endpoints.js";
import { buildUnder, prepareChatBody } from "../../client/requests.js";
import type { ChatRequest } from "../../client/schemas.js";
import type { ChatResult } from "../../client/sse.js";
import { LIMITS } from "../../config/service-limits.js";
import type { RunResult } from "../../ledger/open-ledger.js";
import { defaultBudget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import type { ToolOutcome } from "../../mcp/define-tool.js";
import { Questions } from "../../mcp/questions.js";
import { okResult } from "../../mcp/results.js";
import { catalogCheck } from "../catalog/catalog-check.js";
import { checkArguments, claimAndSend, deliver, refused, spendingNotes } from "./paid-call.js";
import { type Ceiling, confirmSpending } from "./spending.js";

/** The chat tool's arguments: the service's request (streamed by us), and the identity to use. */
export type ChatArgs = Omit<ChatRequest, "stream"> & {
  idempotencyKey?: string | undefined;
  approval?: string | undefined;
};

/** Progress about the text received comes at most this often. */
const PROGRESS_EVERY_MS = 250;

export async function chatCall(args: ChatArgs, ctx: ToolContext, engine: Engine): Promise<ToolOutcome> {
  const { idempotencyKey, maxGems, approval, ...request } = args;
  const budget = defaultBudget();
  let ceiling: Ceiling | undefined;
  try {
    // 1. Check the arguments: what the model catalog rules out (a model that is not a text model),
    // then the body's own fields.
    const checked = await checkArguments(
      () => prepareChatBody({ ...request, stream: true }),
      () => catalogCheck(engine, "chat", "text", { model: request.model, idempotencyKey }),
    );
    // 2. Confirm spending: text has no estimate, so the threshold (if any) travels as the ceiling.
    const q = new Questions(ctx, { engine, tool: "chat", args });
    ceiling = await confirmSpending(engine, ctx, q, {
      tool: "chat",
      model: checked.body.model,
      given: maxGems,
      limit: LIMITS.textMaxGems,
      args: { ...args },
      approval,
    });
    if (q.pending) return await q.result();
    // 3. Build the body once under the confirmed ceiling; claim the identity with its bytes, then
    // send them within the budget (streamed).
    let lastReport = 0;
    const run = await claimAndSend(engine, ctx, {
      tool: "chat",
      endpoint: endpointOf("chat"),
      built: buildUnder(checked, ceiling.maxGems),
      idempotencyKey,
      budget,
      send: (identity, bytes, signal) =>
        engine.client.chat(bytes, identity, {
          ...(signal ? { signal } : {}),
          onDelta: (_delta, soFar) => {
            const now = Date.now();
            if (now - lastReport < PROGRESS_EVERY_MS) return;
            lastReport = now;
            void ctx.progress(`Received ${soFar.length} characters`);
          },
        }),
      ref: (r) => ({ responseId: r.id }),
    });
    // 4. Present the answer; 5. deliver, and mark delivered once the transport wrote it.
    return deliver(ctx, run, present(engine, run, ceiling));
  } catch (err) {
    return refused(engine, err, ceiling);
  } finally {
    budget.release();
  }
}

/** The answer, then what happened: model, finish, usage, identity, Gems, and what to do next. */
function present(engine: Engine, run: RunResult<ChatResult>, ceiling: Ceiling): ToolOutcome {
  const r = run.result;
  const created = !run.reused;
  const usage = r.usage
    ? Object.entries(r.usage)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")
    : "not reported";
  const footer = [
    `(model ${r.model}; finish reason ${r.finishReason ?? "none"}; usage: ${usage}; identity ${run.identity})`,
    ...spendingNotes(engine, run, ceiling, "messages"),
    r.finishReason === "length"
      ? "The answer hit max_tokens: raise max_tokens or ask to continue."
      : undefined,
  ].filter((l): l is string => l !== undefined);
  return okResult([r.content, "", ...footer].join("\n"), {
    idempotencyKey: run.identity,
    created,
    id: r.id,
    model: r.model,
    content: r.content,
    finishReason: r.finishReason,
    usage: r.usage,
  });
}
