/**
 * A batch's answer (generate_batch, batch-call.ts): every item's identity, its task (status,
 * outputs with asset IDs and URLs, Gems) or its refusal, the Gems of the whole (what was quoted and
 * charged, under which ceiling), and the next step, in the text and in structuredContent alike,
 * since some hosts show their model only structuredContent. The answer is an error (isError) only
 * when every item failed; a partly failed batch says what was charged and which items to retry.
 */
import type { ContentBlock } from "@modelcontextprotocol/server";
import type { Submission, Task } from "../../client/schemas.js";
import { isTerminal } from "../../config/service-limits.js";
import { DEFAULT_WAIT_CAP_SECONDS } from "../../config/time-limits.js";
import type { RunResult } from "../../ledger/open-ledger.js";
import type { Engine } from "../../mcp/context.js";
import type { ToolOutcome } from "../../mcp/define-tool.js";
import { describeError, okResult } from "../../mcp/results.js";
import { gems } from "../../shared/wording.js";
import { type Ceiling, ceilingNote } from "./spending.js";
import { assetLine, outputUri, resourceLinks } from "./task-view.js";

export type ItemRun = RunResult<{ httpStatus: number; submission: Submission }>;
/** How an item ended in this call: sent (its run), or refused with its identity. */
export type ItemOutcome =
  | { index: number; identity: string; maxGems: number | undefined; run: ItemRun; task: Task }
  | { index: number; identity: string; maxGems: number | undefined; error: unknown };

export interface BatchFacts {
  identity: string;
  /** The batch's identity existed before: this call replays it (its items too, no new charge). */
  reused: boolean;
  tools: string[];
  ceiling: Ceiling;
  /** The total divided among the items; undefined: none. */
  total: number | undefined;
  /** The sum of the items' estimates, where every item has one. */
  estimated: number | undefined;
  waitSeconds: number;
}

const failed = (t: Task): boolean => t.status === "failed" || t.status === "cancelled";

/** One item's line: identity, task and outputs, or its refusal. */
function itemText(o: ItemOutcome, tool: string): string {
  const head = `items[${o.index}] ${tool}, identity ${o.identity}${o.maxGems === undefined ? "" : `, maxGems ${o.maxGems}`}`;
  if (!("run" in o)) return `${head}: not done: ${describeError(o.error).text}`;
  const t = o.task;
  const replay = o.run.reused ? " (replayed: no new charge)" : "";
  const lines = [
    `${head}: task ${t.id} ${t.status}${replay}; Gems quoted ${t.quotedGems}, charged ${t.chargedGems}, released ${t.releasedGems}.`,
  ];
  for (const out of t.outputs) {
    lines.push(
      out.asset
        ? `  - ${assetLine(out)}: ${out.asset.url} (resource ${outputUri(t.id, out.index)})`
        : `  - ${assetLine(out)}: no downloadable asset${isTerminal(t.status) ? "" : " yet"}`,
    );
  }
  if (t.error) lines.push(`  Error: ${t.error.code}: ${t.error.message}`);
  return lines.join("\n");
}

/** The one step to take next, for the whole batch. */
function nextOf(outcomes: ItemOutcome[], f: BatchFacts): string {
  const wait = Math.min(f.waitSeconds, DEFAULT_WAIT_CAP_SECONDS);
  const running = outcomes.flatMap((o) => ("run" in o && !isTerminal(o.task.status) ? [o.task.id] : []));
  const retry = outcomes.flatMap((o) => (!("run" in o) || failed(o.task) ? [o.index] : []));
  const steps: string[] = [];
  if (running.length > 0) {
    steps.push(
      `call poll_task for each unfinished task (${running.map((id) => `{"taskId": ${JSON.stringify(id)}, "wait": ${wait}}`).join(", ")}) until it is terminal; do not submit them again`,
    );
  }
  if (retry.length > 0) {
    steps.push(
      `tell the user which items failed and why; to retry only those, call generate_batch with items ${retry.map((i) => `[${i}]`).join(", ")} alone (a new batch), or the same batch with idempotencyKey "${f.identity}" to replay it without paying again for the others`,
    );
  }
  if (steps.length === 0) {
    steps.push(
      "give the user the URLs above (they expire; poll_task returns fresh ones), or call save_outputs with each task ID",
    );
  }
  return steps.join("; then ");
}

/** The Gems of the whole: quoted and charged so far, and the ceiling they were held to. */
function gemsOf(outcomes: ItemOutcome[], f: BatchFacts) {
  let quoted = 0;
  let charged = 0;
  for (const o of outcomes) {
    if (!("run" in o)) continue;
    quoted += o.task.quotedGems;
    charged += o.task.chargedGems;
  }
  return {
    ...(f.estimated === undefined ? {} : { estimated: f.estimated }),
    ...(f.total === undefined ? {} : { ceiling: f.total }),
    quoted,
    charged,
  };
}

export function presentBatch(engine: Engine, outcomes: ItemOutcome[], f: BatchFacts): ToolOutcome {
  const sent = outcomes.filter((o) => "run" in o);
  const allFailed = outcomes.every((o) => !("run" in o) || failed(o.task));
  const money = gemsOf(outcomes, f);
  const next = nextOf(outcomes, f);
  // A single call's note, said of the whole: the batch's ceiling went out divided, not as one maxGems.
  const whole = (n: string) =>
    n.replace(
      /^Sent with maxGems (\d+)/,
      "The whole batch was held to $1 Gems (divided into each item's maxGems)",
    );
  const notes = [ceilingNote(engine, f.ceiling)].filter((n): n is string => n !== undefined).map(whole);
  const lines = [
    `${allFailed ? "BATCH_FAILED: every item failed. " : ""}Batch of ${outcomes.length} items, identity (idempotencyKey) ${f.identity}${f.reused ? " (replayed: every item continues under its own identity, not charged twice)" : ""}: ${sent.length} accepted by the service, ${outcomes.length - sent.length} refused.`,
    `Gems: ${f.estimated === undefined ? "" : `estimated about ${gems(f.estimated)}; `}${f.total === undefined ? "no total ceiling" : `ceiling ${gems(f.total)} for the whole, divided into each item's maxGems`}; quoted ${money.quoted}, charged so far ${money.charged} (the sum over the items' tasks).`,
    ...notes,
    ...outcomes.map((o) => itemText(o, f.tools[o.index] ?? "")),
    `Keep the batch's identity: the same batch with idempotencyKey "${f.identity}" replays every item and never charges twice.`,
    `Next: ${next}.`,
  ];
  const items = outcomes.map((o) => {
    const base = { index: o.index, tool: f.tools[o.index] ?? "", identity: o.identity };
    const ceiling = o.maxGems === undefined ? {} : { maxGems: o.maxGems };
    if ("run" in o)
      return { ...base, ...ceiling, created: !o.run.reused && o.run.result.submission.created, task: o.task };
    const { code, text } = describeError(o.error);
    return { ...base, ...ceiling, error: { code, message: text } };
  });
  const content: ContentBlock[] = sent.flatMap((o) => ("run" in o ? resourceLinks(o.task) : []));
  const structured = { idempotencyKey: f.identity, items, gems: money, next };
  const result = okResult(lines.join("\n"), structured, content);
  return allFailed ? { ...result, isError: true } : result;
}
