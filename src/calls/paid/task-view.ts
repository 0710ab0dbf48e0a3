/**
 * How a task reads to an assistant: status, IDs, Gems, signed URLs and the next step in
 * text; a resource_link per output asset; an inline preview only for finished images
 * small enough for hosts' 1 MB result limit, fetched within a few seconds at most.
 */
import type { ContentBlock } from "@modelcontextprotocol/server";
import { limitSignal } from "../../client/deadline.js";
import type { Task } from "../../client/schemas.js";
import { isTerminal } from "../../config/service-limits.js";
import { DEFAULT_WAIT_CAP_SECONDS, PREVIEW_CAP_MS } from "../../config/time-limits.js";
import type { Engine } from "../../mcp/context.js";
import { describeError } from "../../mcp/results.js";
import { statusPredicate } from "../../shared/wording.js";

/** Raw bytes of all previews together: base64 grows them by a third, still well under 1 MB. */
export const PREVIEW_BUDGET_BYTES = 512 * 1024;

export const outputUri = (taskId: string, index: number): string =>
  `generation://tasks/${encodeURIComponent(taskId)}/outputs/${index}`;

const EXTENSIONS: Record<string, string> = {
  "image/jpeg": "jpg",
  "image/svg+xml": "svg",
  "audio/mpeg": "mp3",
  "audio/mp4": "m4a",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "video/quicktime": "mov",
};
export function extensionFor(mimeType: string): string {
  const known = EXTENSIONS[mimeType];
  if (known) return known;
  const sub = mimeType.split("/")[1]?.split(/[;+]/)[0] ?? "";
  return sub.replace(/^x-/, "").replace(/[^a-z0-9]/gi, "") || "bin";
}

export const outputName = (taskId: string, index: number, mimeType: string): string =>
  `${taskId}-${index}.${extensionFor(mimeType)}`;

/**
 * What an output's asset ID can be passed as, by its MIME type (the service's parameters,
 * docs/service.md): an ID, not the URL or the resource URI, is what generation takes.
 */
export function assetUses(mimeType: string): string {
  if (mimeType.startsWith("image/")) return "as sourceImage or endFrame, or in referenceAssetIds";
  if (mimeType.startsWith("video/")) return "as videoAssetId for extract_video, or referenceVideo";
  if (mimeType.startsWith("audio/")) return "as coverAudio, or in referenceAudios";
  return "in referenceAssetIds";
}

type Output = Task["outputs"][number];

/** "#0 succeeded image/png, asset ID a1 (use it as sourceImage …)": an output line's start. */
export function assetLine(out: Output): string {
  if (!out.asset) return `#${out.index} ${out.status}`;
  const { id, mimeType } = out.asset;
  return `#${out.index} ${out.status} ${mimeType}, asset ID ${id} (use it ${assetUses(mimeType)})`;
}

export function resourceLinks(task: Task): ContentBlock[] {
  return task.outputs
    .filter((o) => o.asset)
    .map((o) => ({
      type: "resource_link" as const,
      uri: outputUri(task.id, o.index),
      name: outputName(task.id, o.index, o.asset?.mimeType ?? ""),
      mimeType: o.asset?.mimeType ?? "application/octet-stream",
      description: `Output ${o.index} of task ${task.id} (${o.status}), asset ID ${o.asset?.id}; read it for the bytes through a freshly signed URL.`,
    }));
}

/** The step after this task's answer, without the "Next: " its text puts before it. */
function stepAfter(task: Task, wait: number, saved: boolean, saves: boolean): string {
  const id = JSON.stringify(task.id);
  if (saved && (task.status === "succeeded" || task.status === "partial")) {
    return `tell the user where the saved files are (listed above)${task.status === "partial" ? " and which outputs failed" : ""}; nothing else is needed.`;
  }
  switch (task.status) {
    case "succeeded":
      return saves
        ? `give the user the URLs above (they expire; poll_task returns fresh ones), or call save_outputs with {"taskId": ${id}} to write them into the output directory.`
        : "give the user the URLs above (they expire; poll_task returns fresh ones) or the media viewer's Download; this server saves no files for remote users.";
    case "partial":
      return `save (save_outputs with {"taskId": ${id}}) or show the successful outputs and tell the user which failed; the failed ones are not retried automatically.`;
    case "failed":
    case "cancelled":
      return `stop polling and tell the user why (${task.error ? `${task.error.code}: ${task.error.message}` : "no reason given"}). Unused Gems are released.`;
    default:
      return `the task is still running. Keep the task ID and call poll_task with {"taskId": ${id}, "wait": ${wait}} until it is terminal; do not submit again.`;
  }
}

/**
 * The step to take after this task's answer (structuredContent's `next`, and the text's last line).
 * A longer wait than one call's budget would outlast what hosts allow one call (about 60 s): a
 * call without a wait of its own is held to the same cap (src/mcp/budget.ts).
 */
export const taskNext = (task: Task, o: TaskTextOptions): string =>
  stepAfter(task, Math.min(o.wait, DEFAULT_WAIT_CAP_SECONDS), (o.saved?.length ?? 0) > 0, o.saves ?? true);

export const JOINED = "It joined an identical call in flight: one request, not charged twice.";
export const REPLAYED = "It continues an earlier request under the same identity: not charged twice.";

export interface TaskTextOptions {
  identity?: string;
  reused?: boolean;
  /** The call waited for an identical call in flight and shares its task. */
  joined?: boolean;
  created?: boolean;
  /** Seconds to suggest for the next poll_task wait (the default wait): capped to one call's budget. */
  wait: number;
  notes?: string[];
  /** Paths the outputs were saved to in this call. */
  saved?: string[];
  /** Whether save_outputs can write to disk for this caller (not for a remote user without files). */
  saves?: boolean;
}

export function taskText(task: Task, o: TaskTextOptions): string {
  const terminal = isTerminal(task.status);
  const lines = [
    `Task ${task.id} ${statusPredicate(task.status)}${terminal ? " (terminal)" : " (not finished yet)"}.`,
  ];
  if (o.identity) {
    const how = o.joined ? ` ${JOINED}` : o.reused || o.created === false ? ` ${REPLAYED}` : "";
    lines.push(
      `Identity (idempotencyKey): ${o.identity}.${how} Keep it: the same arguments with idempotencyKey "${o.identity}" replay this request and never charge twice.`,
    );
  }
  lines.push(`Gems: quoted ${task.quotedGems}, charged ${task.chargedGems}, released ${task.releasedGems}.`);
  if (task.outputs.length > 0) {
    lines.push("Outputs:");
    for (const out of task.outputs) {
      lines.push(
        out.asset
          ? `- ${assetLine(out)}: ${out.asset.url} (resource ${outputUri(task.id, out.index)})`
          : `- ${assetLine(out)}: no downloadable asset${terminal ? "" : " yet"}`,
      );
    }
  }
  if (terminal && task.outputs.length > 0) {
    const ok = task.outputs.filter((x) => x.asset && x.status === "succeeded").map((x) => `#${x.index}`);
    const bad = task.outputs.filter((x) => !(x.asset && x.status === "succeeded")).map((x) => `#${x.index}`);
    lines.push(`Succeeded: ${ok.join(", ") || "none"}. Failed: ${bad.join(", ") || "none"}.`);
  }
  if (task.error) lines.push(`Error: ${task.error.code}: ${task.error.message}`);
  for (const note of o.notes ?? []) lines.push(note);
  lines.push(`Next: ${taskNext(task, o)}`);
  return lines.join("\n");
}

/**
 * Inline previews of finished images within the byte budget and a total time cap (one deadline
 * for all of them, not re-armed per chunk); notes for those left out.
 */
export async function imagePreviews(
  engine: Engine,
  task: Task,
  caller: AbortSignal,
  capMs = PREVIEW_CAP_MS,
): Promise<{ blocks: ContentBlock[]; notes: string[] }> {
  const blocks: ContentBlock[] = [];
  const notes: string[] = [];
  if (!isTerminal(task.status)) return { blocks, notes };
  const cap = limitSignal(caller, capMs);
  const signal = cap.signal;
  let budget = PREVIEW_BUDGET_BYTES;
  for (const out of task.outputs) {
    const asset = out.asset;
    if (!asset || out.status !== "succeeded" || !asset.mimeType.startsWith("image/")) continue;
    if (budget <= 0) {
      notes.push(
        `Preview of #${out.index} left out: the inline budget of ${PREVIEW_BUDGET_BYTES} bytes is used up.`,
      );
      continue;
    }
    try {
      const { bytes, mimeType } = await engine.client.fetchOutput(asset.url, { signal, maxBytes: budget });
      budget -= bytes.byteLength;
      blocks.push({ type: "image", data: Buffer.from(bytes).toString("base64"), mimeType });
    } catch (err) {
      if (cap.expired()) {
        notes.push(
          `Preview of #${out.index} left out: not fetched within ${capMs / 1000} s; use its URL or resource.`,
        );
        continue;
      }
      notes.push(
        `Preview of #${out.index} left out (${describeError(err).code}): larger than the ${budget}-byte inline budget or unreadable; use its URL or resource.`,
      );
    }
  }
  cap.release();
  return { blocks, notes };
}
