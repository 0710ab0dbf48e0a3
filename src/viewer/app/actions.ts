/**
 * What a person can do with an output: save it into the output directory (save_outputs),
 * download it (the host's ui/download-file), copy the task ID and the identity.
 */
import { h } from "./dom.js";
import type { Host } from "./protocol.js";
import { type CallResult, type Output, type Task, textOf } from "./types.js";

/** Clipboard access may be refused inside a sandboxed frame: fall back to a selected field. */
async function copyText(text: string, status: HTMLElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = `Copied ${text}`;
    return;
  } catch {
    const field = h("input", { value: text, readonly: true, "aria-label": "Text to copy" });
    document.body.append(field);
    field.select();
    const copied = document.execCommand("copy");
    field.remove();
    status.textContent = copied ? `Copied ${text}` : `Copy this by hand: ${text}`;
  }
}

async function save(host: Host, task: Task, status: HTMLElement): Promise<void> {
  status.textContent = "Saving…";
  try {
    const r = (await host.request("tools/call", {
      name: "save_outputs",
      arguments: { taskId: task.id },
    })) as CallResult;
    const saved = (r.structuredContent?.saved as string[] | undefined) ?? [];
    status.textContent = r.isError ? textOf(r) : saved.length > 0 ? `Saved: ${saved.join(", ")}` : textOf(r);
  } catch (err) {
    status.textContent = `Not saved: ${(err as Error).message}`;
  }
}

async function download(host: Host, task: Task, out: Output, status: HTMLElement): Promise<void> {
  const asset = out.asset;
  if (!asset) return;
  const ext = asset.mimeType.split("/")[1]?.split(/[;+]/)[0] ?? "bin";
  try {
    const r = (await host.request("ui/download-file", {
      contents: [
        {
          type: "resource_link",
          uri: `generation://tasks/${encodeURIComponent(task.id)}/outputs/${out.index}`,
          name: `${task.id}-${out.index}.${ext}`,
          mimeType: asset.mimeType,
        },
      ],
    })) as { isError?: boolean };
    status.textContent = r.isError ? "The host did not download it." : "Download started.";
  } catch (err) {
    status.textContent = `No download: ${(err as Error).message}`;
  }
}

export function outputActions(
  host: Host,
  task: Task,
  out: Output,
  identity: string | undefined,
): HTMLElement {
  const status = h("span", { class: "action-status", role: "status" });
  const button = (label: string, run: () => void, hint?: string) => {
    const b = h("button", { type: "button", title: hint }, label);
    b.addEventListener("click", run);
    return b;
  };
  const bar = h(
    "div",
    { class: "actions" },
    button("Save", () => void save(host, task, status), "Save this task's outputs to the output directory"),
  );
  if (host.capabilities.downloadFile !== undefined) {
    bar.append(button("Download", () => void download(host, task, out, status)));
  }
  bar.append(button("Copy task ID", () => void copyText(task.id, status)));
  if (identity) bar.append(button("Copy identity", () => void copyText(identity, status)));
  bar.append(status);
  return bar;
}
