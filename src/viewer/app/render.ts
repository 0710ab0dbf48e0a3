/**
 * The task on screen: a status line (status, elapsed time, Gems quoted) while it runs, a gallery
 * of images (full size on click), audio players with their duration, video players with a poster
 * frame, failed outputs with their reason, and a footer with the identity and the Gems.
 * Output elements are kept across refreshes so media load once.
 */

import { gems, statusPredicate } from "../../client/wording.js";
import { outputActions } from "./actions.js";
import { formatDuration, h, plural } from "./dom.js";
import { attachMedia, type MediaElement } from "./media.js";
import type { Host } from "./protocol.js";
import { type Output, type Task, TERMINAL } from "./types.js";

export interface Shown {
  task: Task;
  identity?: string | undefined;
  prompt?: string | undefined;
  /** When the view first saw the task running, for the elapsed time. */
  since: number;
}

const cards = new Map<string, HTMLElement>();

function describe(prompt: string | undefined, kind: string, out: Output, count: number): string {
  const base = `${kind} ${out.index + 1} of ${count}`;
  if (!prompt) return base;
  const short = prompt.length > 180 ? `${prompt.slice(0, 177)}…` : prompt;
  return `${base}: ${short}`;
}

function openFullSize(img: HTMLImageElement, label: string): void {
  const dialog = h("dialog", { class: "full", "aria-label": `${label} (full size)` });
  const close = h("button", { type: "button", class: "close" }, "Close");
  const big = h("img", { src: img.src, alt: img.alt, class: "full-image" });
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  dialog.addEventListener("click", (e) => {
    if (e.target === dialog) dialog.close();
  });
  dialog.append(close, big);
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
}

function mediaFor(host: Host, shown: Shown, out: Output, note: HTMLElement): HTMLElement {
  const asset = out.asset;
  if (!asset) return h("span");
  const { task, prompt } = shown;
  const kind = asset.mimeType.split("/")[0] ?? "file";
  const label = describe(
    prompt,
    kind === "image" ? "Image" : kind === "audio" ? "Audio" : "Video",
    out,
    task.outputs.length,
  );
  let el: MediaElement;
  let wrap: HTMLElement;
  if (kind === "image") {
    // elementtiming lets a host (and bench/viewer.ts) time when the image was painted.
    el = h("img", { alt: label, decoding: "async", elementtiming: `output-${out.index}` });
    const img = el;
    wrap = h("button", { type: "button", class: "thumb", "aria-label": `${label}. Open full size` }, el);
    wrap.addEventListener("click", () => openFullSize(img, label));
  } else if (kind === "audio") {
    el = h("audio", { controls: true, preload: "metadata", "aria-label": label });
    const audio = el;
    const length = h("span", { class: "duration" }, "length …");
    audio.addEventListener("loadedmetadata", () => {
      length.textContent = `length ${formatDuration(audio.duration)}`;
    });
    wrap = h("div", { class: "player" }, el, length);
  } else if (kind === "video") {
    // preload=metadata with a first-frame seek gives the player its poster frame.
    el = h("video", { controls: true, preload: "metadata", playsinline: true, "aria-label": label });
    wrap = h("div", { class: "player" }, el);
  } else {
    return h("span", {}, `${asset.mimeType} output`);
  }
  const ref = { taskId: task.id, index: out.index, mimeType: asset.mimeType, url: asset.url };
  attachMedia(host, el, ref, (share) => {
    note.textContent = `Loading ${Math.round(share * 100)}%`;
  }).then(
    () => {
      note.textContent = "";
      if (el instanceof HTMLVideoElement && !el.src.includes("#")) el.currentTime = 0.05;
    },
    (err: Error) => {
      note.textContent = `Could not show it here (${err.message}); use Save or Download.`;
    },
  );
  return wrap;
}

function outputCard(host: Host, shown: Shown, out: Output): HTMLElement {
  const { task } = shown;
  const key = `${task.id}/${out.index}/${out.asset?.id ?? out.status}`;
  const kept = cards.get(key);
  if (kept) return kept;
  const note = h("p", { class: "note", role: "status" });
  const failed = TERMINAL.has(task.status) && (out.status !== "succeeded" || !out.asset);
  const card = h("li", { class: `output ${failed ? "failed" : ""}`, "data-index": out.index });
  if (failed) {
    const why = task.error ? `${task.error.code}: ${task.error.message}` : "the service gave no reason";
    card.append(h("p", { class: "error" }, `Output #${out.index} failed (${out.status}): ${why}`));
  } else if (!out.asset) {
    card.append(h("p", { class: "waiting" }, `Output #${out.index}: ${out.status}…`));
  } else {
    card.append(mediaFor(host, shown, out, note), note, outputActions(host, task, out, shown.identity));
  }
  cards.set(key, card);
  return card;
}

/** Announces a change of status to screen readers once, not the seconds ticking by. */
function announce(text: string): void {
  let region = document.getElementById("announce");
  if (!region) {
    region = h("p", { id: "announce", class: "visually-hidden", role: "status" });
    document.body.append(region);
  }
  if (region.textContent !== text) region.textContent = text;
}

function statusLine(shown: Shown, now: number): HTMLElement {
  const { task } = shown;
  const done = TERMINAL.has(task.status);
  const parts = [`Task ${task.id}: ${task.status}`];
  if (!done) parts.push(`${plural(Math.round((now - shown.since) / 1000), "second")} elapsed`);
  parts.push(`${gems(task.quotedGems)} quoted`);
  announce(`Task ${task.id} ${statusPredicate(task.status)}.`);
  const line = h(
    "p",
    { class: `status status-${task.status}`, "data-status": task.status },
    parts.join(" · "),
  );
  if (task.status === "partial") {
    const ok = task.outputs.filter((o) => o.status === "succeeded" && o.asset).length;
    line.append(h("span", { class: "error" }, ` Only ${ok} of ${task.outputs.length} outputs succeeded.`));
  }
  if ((task.status === "failed" || task.status === "cancelled") && task.error) {
    line.append(h("span", { class: "error" }, ` ${task.error.code}: ${task.error.message}`));
  }
  return line;
}

function footer(shown: Shown): HTMLElement {
  const { task, identity } = shown;
  return h(
    "footer",
    {},
    identity ? `Identity ${identity} · ` : "",
    `Gems: quoted ${task.quotedGems}, charged ${task.chargedGems}, released ${task.releasedGems}`,
  );
}

/** Renders (or re-renders) the task into `root`. */
export function renderTask(root: HTMLElement, host: Host, shown: Shown, now = Date.now()): void {
  const list = h("ul", { class: "outputs", "aria-label": "Outputs" });
  for (const out of shown.task.outputs) list.append(outputCard(host, shown, out));
  root.replaceChildren(statusLine(shown, now), list, footer(shown));
}

/** Only the status line, for the elapsed time ticking between refreshes. */
export function renderStatus(root: HTMLElement, shown: Shown, now = Date.now()): void {
  root.querySelector(".status")?.replaceWith(statusLine(shown, now));
}
