/**
 * A generate_batch answer as one gallery (src/calls/paid/batch-view.ts makes it): a line for the
 * whole (items sent and refused, Gems quoted and charged, the ceiling), then each item in order
 * with its tool and identity, and either its task as a lone call's view shows it (status, outputs,
 * Gems) or its refusal, and the batch's identity at the foot. Tasks still running are followed
 * like a lone task's (main.ts); the whole is drawn again with each change, media cards kept.
 */
import { h, plural } from "./dom.js";
import type { Host } from "./protocol.js";
import { announce, type Shown, taskParts } from "./render.js";
import { type Task, TERMINAL } from "./types.js";

/** One item of the answer's structuredContent.items: its task, or its refusal. */
export interface BatchItem {
  index: number;
  tool: string;
  identity: string;
  maxGems?: number;
  task?: Task;
  error?: { code: string; message: string };
}

export interface BatchShown {
  identity: string | undefined;
  /** Each item, with its task as the view follows it (none: refused). */
  items: Array<{ item: BatchItem; shown: Shown | undefined }>;
  /** The whole batch's estimate and ceiling, as the answer gave them. */
  estimated: number | undefined;
  ceiling: number | undefined;
}

/** The batch the answer's structuredContent describes, or undefined when it is no batch. */
export function batchOf(
  sc: Record<string, unknown>,
  args: Record<string, unknown> | undefined,
): BatchShown | undefined {
  if (!Array.isArray(sc.items)) return undefined;
  const given = Array.isArray(args?.items) ? (args.items as Array<{ arguments?: { prompt?: unknown } }>) : [];
  const money = (sc.gems ?? {}) as { estimated?: number; ceiling?: number };
  const since = Date.now();
  return {
    identity: typeof sc.idempotencyKey === "string" ? sc.idempotencyKey : undefined,
    estimated: money.estimated,
    ceiling: money.ceiling,
    items: (sc.items as BatchItem[]).map((item) => {
      const p = given[item.index]?.arguments?.prompt;
      const prompt = typeof p === "string" ? p : undefined;
      return {
        item,
        shown: item.task ? { task: item.task, identity: item.identity, prompt, since } : undefined,
      };
    }),
  };
}

/** The tasks of the batch that are not terminal yet, for main.ts to follow. */
export function running(b: BatchShown): Shown[] {
  return b.items.flatMap(({ shown }) => (shown && !TERMINAL.has(shown.task.status) ? [shown] : []));
}

/** A refreshed task in its item's place. */
export function updateTask(b: BatchShown, task: Task): void {
  for (const entry of b.items) if (entry.shown?.task.id === task.id) entry.shown = { ...entry.shown, task };
}

function summary(b: BatchShown): HTMLElement {
  const tasks = b.items.flatMap(({ shown }) => (shown ? [shown.task] : []));
  const refused = b.items.length - tasks.length;
  const done = tasks.filter((t) => TERMINAL.has(t.status)).length;
  const sum = (f: (t: Task) => number) => tasks.reduce((a, t) => a + f(t), 0);
  const parts = [
    `Batch of ${plural(b.items.length, "item")}: ${tasks.length} sent${refused > 0 ? `, ${refused} refused` : ""}, ${done} done`,
    `Gems in all: quoted ${sum((t) => t.quotedGems)}, charged ${sum((t) => t.chargedGems)}`,
  ];
  if (b.ceiling !== undefined) parts.push(`ceiling ${plural(b.ceiling, "Gem")}`);
  announce(`Batch: ${done} of ${tasks.length} sent items done${refused > 0 ? `, ${refused} refused` : ""}.`);
  return h("p", { class: "batch-summary", "data-done": done, "data-refused": refused }, parts.join(" · "));
}

function itemSection(host: Host, entry: BatchShown["items"][number], now: number): HTMLElement {
  const { item, shown } = entry;
  const refused = shown === undefined;
  const head = h(
    "h2",
    {},
    `Item ${item.index + 1} · ${item.tool}${refused ? " · refused" : ""}`,
    h("span", { class: "identity" }, ` · identity ${item.identity}`),
  );
  const section = h(
    "section",
    {
      class: refused ? "item refused" : "item",
      "data-index": item.index,
      "aria-label": `Item ${item.index + 1}`,
    },
    head,
  );
  if (shown) section.append(...taskParts(host, shown, now, false));
  else {
    const why = item.error ? `${item.error.code}: ${item.error.message}` : "The service did not take it.";
    section.append(h("p", { class: "error" }, `Not sent, nothing charged for it. ${why}`));
  }
  return section;
}

/** Renders (or re-renders) the whole batch into `root`. */
export function renderBatch(root: HTMLElement, host: Host, b: BatchShown, now = Date.now()): void {
  root.replaceChildren(
    summary(b),
    ...b.items.map((entry) => itemSection(host, entry, now)),
    h("footer", { class: "batch-footer" }, b.identity ? `Batch identity ${b.identity}` : ""),
  );
}
