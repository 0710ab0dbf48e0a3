/**
 * The task on screen: a status line (status, elapsed time, Gems quoted) while it runs, a gallery
 * of images (full size on click), audio players with their duration, video players with a poster
 * frame, failed outputs with their reason, and a footer with the identity and the Gems.
 * Output elements are kept across refreshes so media load once.
 */
import { outputActions } from "./actions.js";
import { formatDuration, h, plural } from "./dom.js";
import { attachMedia, type MediaElement, NotShown } from "./media.js";
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
  // The frame is as tall as the page, and a dialog adds nothing to it: make room for the image at
  // its own height, so the host grows the frame (size-changed), and give it back on close.
  document.body.style.minHeight = `${img.naturalHeight + 60}px`;
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    document.body.style.minHeight = "";
    dialog.remove();
  });
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
      // The output itself is fine: no empty frame for it, and what still works.
      wrap.hidden = true;
      const why = err instanceof NotShown ? err.message : "it could not be loaded";
      note.textContent = `Not shown here: ${why}. Save or Download still work.`;
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
  // Numbered from 1, as the alt text counts; the task's reason is said once, on the status line.
  const n = out.index + 1;
  if (failed) {
    const what = out.status === "failed" ? "failed" : `did not finish (${out.status})`;
    const why = task.error ? "" : " The service gave no reason.";
    card.append(h("p", { class: "error" }, `Output ${n} ${what}.${why}`));
  } else if (!out.asset) {
    card.append(h("p", { class: "waiting" }, `Output ${n}: ${out.status}…`));
  } else {
    card.append(mediaFor(host, shown, out, note), note, outputActions(host, task, out, shown.identity));
  }
  cards.set(key, card);
  return card;
}

/** Announces a change of status to screen readers once, not the seconds ticking by. */
export function announce(text: string): void {
  let region = document.getElementById("announce");
  if (!region) {
    region = h("p", { id: "announce", class: "visually-hidden", role: "status" });
    document.body.append(region);
  }
  if (region.textContent !== text) region.textContent = text;
}

/** What the status means in words, for a sentence ("Task t1 failed."). */
const SAID: Record<string, string> = {
  queued: "is queued",
  processing: "is processing",
  succeeded: "succeeded",
  partial: "finished in part",
  failed: "failed",
  cancelled: "was cancelled",
};

/** A batch's items say their own status; the batch announces its whole (batch-gallery.ts). */
function statusLine(shown: Shown, now: number, speak = true): HTMLElement {
  const { task } = shown;
  const done = TERMINAL.has(task.status);
  const parts = [`Task ${task.id}: ${task.status}`];
  if (!done) parts.push(`${plural(Math.round((now - shown.since) / 1000), "second")} elapsed`);
  parts.push(`${plural(task.quotedGems, "Gem")} quoted`);
  if (speak) announce(`Task ${task.id} ${SAID[task.status] ?? `is ${task.status}`}.`);
  return h("p", { class: `status status-${task.status}`, "data-status": task.status }, parts.join(" · "));
}

/** Why the task fell short, said once under the status line (the cards only say which outputs). */
function shortfall(task: Task): HTMLElement | null {
  const said: string[] = [];
  if (task.status === "partial") {
    const ok = task.outputs.filter((o) => o.status === "succeeded" && o.asset).length;
    said.push(`Only ${ok} of ${task.outputs.length} outputs succeeded.`);
  }
  if (TERMINAL.has(task.status) && task.status !== "succeeded" && task.error) {
    said.push(`${task.error.code}: ${task.error.message}`);
  }
  return said.length > 0 ? h("p", { class: "error", role: "alert" }, said.join(" ")) : null;
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

/** The task's status line, its shortfall, its outputs and its footer, as a view shows them. */
export function taskParts(host: Host, shown: Shown, now = Date.now(), speak = true): HTMLElement[] {
  const single = shown.task.outputs.length === 1;
  const list = h("ul", { class: single ? "outputs single" : "outputs", "aria-label": "Outputs" });
  for (const out of shown.task.outputs) list.append(outputCard(host, shown, out));
  const short = shortfall(shown.task);
  return [statusLine(shown, now, speak), ...(short ? [short] : []), list, footer(shown)];
}

/** Renders (or re-renders) the task into `root`. */
export function renderTask(root: HTMLElement, host: Host, shown: Shown, now = Date.now()): void {
  root.replaceChildren(...taskParts(host, shown, now));
}

/** Only the status line, for the elapsed time ticking between refreshes. */
export function renderStatus(root: HTMLElement, shown: Shown, now = Date.now()): void {
  root.querySelector(".status")?.replaceWith(statusLine(shown, now));
}
