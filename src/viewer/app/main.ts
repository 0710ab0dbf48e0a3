/**
 * The media viewer's entry: connects to the host, shows the tool result it is given (a task from
 * generate_image, generate_video, generate_audio or poll_task, an asset from upload_asset, a voice
 * from upload_voice, the upload form where those were called with no file: upload.ts, or a
 * generate_batch answer as one gallery: batch-gallery.ts), and follows each running task through the app-only tool viewer_read_task on poll_task's schedule
 * (about 2, 4, 8, then 15 s, with jitter) until it is terminal. The model calls nothing for it.
 */
import { pollDelayMs } from "../../client/poll.js";
import { type BatchShown, batchOf, renderBatch, running, updateTask } from "./batch-gallery.js";
import { h } from "./dom.js";
import { Host, type HostContext, type ToolResult } from "./protocol.js";
import { type Quoted, showQuote } from "./quote-view.js";
import { renderStatus, renderTask, type Shown } from "./render.js";
import { type Asset, type CallResult, type Task, TERMINAL, textOf } from "./types.js";
import { showUpload, type UploadRequest } from "./upload.js";

/** package.json's version, inlined by scripts/build-viewer.mjs. */
declare const GENERATION_MCP_VERSION: string;

const root = document.getElementById("app") as HTMLElement;
let prompt: string | undefined;
/** The arguments of the call whose result the view shows: a quote's Approve re-issues them. */
let toolArgs: Record<string, unknown> | undefined;
let shown: Shown | undefined;
/** A generate_batch answer on screen: one gallery of its items (batch-gallery.ts). */
let batch: BatchShown | undefined;
let generation = 0;
let ticker: ReturnType<typeof setInterval> | undefined;

function applyTheme(context: HostContext): void {
  const theme = context.theme === "dark" ? "dark" : context.theme === "light" ? "light" : undefined;
  if (theme) document.documentElement.dataset.theme = theme;
  for (const [name, value] of Object.entries(context.styles?.variables ?? {})) {
    if (typeof value === "string") document.documentElement.style.setProperty(name, value);
  }
}

const host = new Host({
  toolInput(params) {
    toolArgs = params.arguments;
    const p = params.arguments?.prompt;
    prompt = typeof p === "string" ? p : undefined;
  },
  toolResult: (result) => show(result),
  contextChanged: applyTheme,
  toolCancelled(reason) {
    stop();
    // Whether the call reached the service is unknown here: point at where its identity is kept.
    showError(
      `The call ended without a result${reason ? ` (${reason})` : ""}. If it submitted work, that work goes on and its identity and task ID are in list_requests; repeating the same call replays it without a second charge.`,
    );
  },
  teardown: () => stop(),
});

/** Stops following a task (a newer result, a cancellation, or the view going away). */
function stop(): void {
  generation++;
  if (ticker !== undefined) clearInterval(ticker);
}

function showError(text: string): void {
  root.replaceChildren(h("p", { class: "error", role: "alert" }, text));
}

function showAsset(asset: Asset): void {
  const line = h(
    "p",
    { class: "status" },
    `Asset ${asset.id} (${asset.kind}), ${asset.state ?? "state unknown"}`,
  );
  root.replaceChildren(line);
  if (!asset.url) return;
  const label = `Uploaded ${asset.kind} ${asset.id}`;
  const el =
    asset.kind === "image"
      ? h("img", { alt: label })
      : h(asset.kind === "audio" ? "audio" : "video", {
          controls: true,
          preload: "metadata",
          "aria-label": label,
        });
  // An uploaded asset is no task output: only its URL can show it, where the frame's CSP allows.
  el.addEventListener("error", () => {
    el.remove();
    line.append(" (its URL cannot be shown here)");
  });
  el.src = asset.url;
  root.append(h("div", { class: "player" }, el));
}

/** The tasks on screen that are still running: the lone task's, or a batch's. */
function unfinished(): Shown[] {
  if (batch) return running(batch);
  return shown && !TERMINAL.has(shown.task.status) ? [shown] : [];
}

function redraw(): void {
  if (batch) renderBatch(root, host, batch);
  else if (shown) renderTask(root, host, shown);
}

/** Follows the running tasks until they are terminal; a newer result stops an older follow. */
async function follow(mine: number): Promise<void> {
  for (let poll = 0; unfinished().length > 0; poll++) {
    await new Promise((r) => setTimeout(r, pollDelayMs(poll, Math.random)));
    for (const one of unfinished()) {
      if (mine !== generation) return;
      try {
        const r = (await host.request("tools/call", {
          name: "viewer_read_task",
          arguments: { taskId: one.task.id },
        })) as CallResult;
        if (mine !== generation) return;
        const task = r.structuredContent?.task as Task | undefined;
        if (r.isError || !task) continue;
        if (batch) updateTask(batch, task);
        else if (shown) shown = { ...shown, task };
      } catch {
        // A refresh the host refused or lost: try again on the schedule.
      }
    }
    if (mine !== generation) return;
    redraw();
  }
  if (ticker !== undefined) clearInterval(ticker);
}

function show(result: ToolResult): void {
  stop();
  const mine = generation;
  const r = result as CallResult;
  const sc = r.structuredContent ?? {};
  const task = sc.task as Task | undefined;
  batch = batchOf(sc, toolArgs);
  shown = undefined;
  if (batch) {
    renderBatch(root, host, batch);
    if (unfinished().length > 0) {
      ticker = setInterval(redraw, 1000);
      void follow(mine);
    }
    return;
  }
  // A failed generation is an error that still carries its task: shown as the task it is.
  if (!task) {
    const voice = sc.voice as { id: string; name: string } | undefined;
    if (r.isError) showError(textOf(r) || "The tool call failed.");
    else if (sc.upload) showUpload(root, host, sc.upload as UploadRequest);
    else if (sc.approval)
      showQuote(root, host, sc.approval as Quoted, toolArgs, (a) => show(a as ToolResult));
    else if (sc.asset) showAsset(sc.asset as Asset);
    else if (voice)
      root.replaceChildren(h("p", { class: "status" }, `Voice ${voice.id} (${voice.name}), private`));
    else showError("This result carries no task to show.");
    return;
  }
  const identity = typeof sc.idempotencyKey === "string" ? sc.idempotencyKey : undefined;
  shown = { task, identity, prompt, since: Date.now() };
  renderTask(root, host, shown);
  if (!TERMINAL.has(task.status)) {
    ticker = setInterval(() => shown && renderStatus(root, shown), 1000);
    void follow(mine);
  }
}

new ResizeObserver(() => {
  const rect = document.documentElement.getBoundingClientRect();
  host.reportSize(Math.ceil(rect.width), Math.ceil(rect.height));
}).observe(document.documentElement);

host.connect({ name: "generation-mcp viewer", version: GENERATION_MCP_VERSION }).catch((err: Error) => {
  showError(`The host did not connect the viewer: ${err.message}`);
});
