/**
 * Media tasks. A task's whole future is fixed when it is created (timings, outcome, outputs),
 * and its status at any moment is computed from the sandbox clock: reads never advance
 * generation, settle billing or change anything.
 *
 * Magic markers in the prompt (for tests and rehearsals):
 * - `[sandbox:fail]`: the task ends `failed`, every Gem released.
 * - `[sandbox:partial]`: the task ends `partial`: the first half of the outputs (at least one)
 *   succeed, the rest fail; Gems are charged in proportion and the rest released.
 * - `[sandbox:slow]`: queued and processing take 20 times longer.
 */
import type { AssetRecord, AssetStore } from "./assets.js";
import type { KeyRecord } from "./keys.js";
import type { MediaPlan } from "./plan.js";

export const SANDBOX_MARKERS = {
  fail: "[sandbox:fail]",
  partial: "[sandbox:partial]",
  slow: "[sandbox:slow]",
  analysisFailed: "[sandbox:analysis-failed]",
} as const;

export type Outcome = "succeeded" | "partial" | "failed";

export interface TaskRecord {
  id: string;
  ownerId: string;
  /** The prompt it was created for: how a test counts the tasks one call created (steering.ts). */
  prompt: string;
  createdAt: number;
  startsAt: number;
  doneAt: number;
  outcome: Outcome;
  quoted: number;
  charged: number;
  /** One per planned output; undefined where the output fails. */
  outputs: (AssetRecord | undefined)[];
}

export class TaskStore {
  private readonly byId = new Map<string, TaskRecord>();
  constructor(
    private readonly assets: AssetStore,
    private readonly nextId: () => string,
  ) {}

  /** Creates the task, its output assets and its reservation (settling at `doneAt`). */
  create(key: KeyRecord, prompt: string, plan: MediaPlan, now: number): TaskRecord {
    const slow = prompt.includes(SANDBOX_MARKERS.slow) ? 20 : 1;
    const outcome: Outcome = prompt.includes(SANDBOX_MARKERS.fail)
      ? "failed"
      : prompt.includes(SANDBOX_MARKERS.partial)
        ? "partial"
        : "succeeded";
    const startsAt = now + plan.queuedMs * slow;
    const doneAt = startsAt + plan.processingMs * slow;
    const n = plan.outputs.length;
    const okCount = outcome === "failed" ? 0 : outcome === "partial" ? Math.max(1, Math.floor(n / 2)) : n;
    const outputs = plan.outputs.map((o, i) =>
      i < okCount
        ? this.assets.add({
            ownerId: key.id,
            kind: o.kind,
            mimeType: o.mimeType,
            readyAt: doneAt,
            render: o.render,
          })
        : undefined,
    );
    const charged = Math.floor((plan.quote * okCount) / Math.max(1, n));
    const task: TaskRecord = {
      id: this.nextId(),
      ownerId: key.id,
      prompt,
      createdAt: now,
      startsAt,
      doneAt,
      outcome,
      quoted: plan.quote,
      charged,
      outputs,
    };
    key.spends.add({ quoted: plan.quote, charged, settleAt: doneAt });
    this.byId.set(task.id, task);
    return task;
  }

  /** Every task, whatever its owner: for the steering routes only (steering.ts). */
  all(): IterableIterator<TaskRecord> {
    return this.byId.values();
  }

  /** The task if this key owns it; other keys' tasks are indistinguishable from unknown ones. */
  owned(ownerId: string, id: string): TaskRecord | undefined {
    const t = this.byId.get(id);
    return t && t.ownerId === ownerId ? t : undefined;
  }

  /** The Task resource at `now`, with freshly signed output URLs. */
  view(t: TaskRecord, origin: string, now: number): Record<string, unknown> {
    const terminal = now >= t.doneAt;
    const status = terminal ? t.outcome : now >= t.startsAt ? "processing" : "queued";
    return {
      id: t.id,
      status,
      quotedGems: t.quoted,
      chargedGems: terminal ? t.charged : 0,
      releasedGems: terminal ? t.quoted - t.charged : 0,
      error:
        terminal && t.outcome === "failed"
          ? { code: "GENERATION_FAILED", message: "The sandbox failed this task as asked by the prompt." }
          : null,
      outputs: t.outputs.map((a, index) => ({
        index,
        status: terminal ? (a ? "succeeded" : "failed") : status,
        asset:
          terminal && a
            ? { id: a.id, kind: a.kind, mimeType: a.mimeType, url: this.assets.signedUrl(a, origin, now) }
            : null,
      })),
    };
  }
}
