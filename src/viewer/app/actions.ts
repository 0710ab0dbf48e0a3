/**
 * What a person can do with an output: save it into the output directory (save_outputs),
 * download it (the host's ui/download-file), copy the task ID and the identity.
 */
import { h } from "./dom.js";
import { freshUrl, readBytes, toBase64 } from "./media.js";
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

/**
 * A refusal as a narrow card can hold it: what the user must do first. The whole text (code, why,
 * what next) stays in the status's tooltip.
 */
export function refusalShort(text: string): string {
  if (text.startsWith("SAVE_NOT_ALLOWED") && /for remote users/.test(text)) {
    return "Not saved: this server keeps no files for remote users. Use Download, or the output's link.";
  }
  if (text.startsWith("SAVE_NOT_ALLOWED")) {
    return "Not saved: no folder is allowed. Add one to GENERATION_FILES (or the host's roots), then Save again.";
  }
  const next = /Next: ([^.]*[.]?)/.exec(text)?.[1];
  return `Not saved${next ? `: ${next}` : `: ${text.split(/(?<=\.) /)[0] ?? text}`}`;
}

async function save(host: Host, task: Task, status: HTMLElement): Promise<void> {
  status.textContent = "Saving…";
  status.removeAttribute("title");
  try {
    const r = (await host.request("tools/call", {
      name: "save_outputs",
      arguments: { taskId: task.id },
    })) as CallResult;
    const saved = (r.structuredContent?.saved as string[] | undefined) ?? [];
    if (r.isError) {
      status.textContent = refusalShort(textOf(r));
      status.title = textOf(r);
    } else status.textContent = saved.length > 0 ? `Saved: ${saved.join(", ")}` : textOf(r);
  } catch (err) {
    status.textContent = `Not saved: ${(err as Error).message}`;
  }
}

/** The output's bytes as an embedded file, read through the host; or, where they cannot be read, a fresh signed URL. */
async function downloadItem(
  host: Host,
  task: Task,
  out: Output,
  name: string,
  mimeType: string,
): Promise<object> {
  try {
    const { blob } = await readBytes(host, { taskId: task.id, index: out.index, mimeType });
    return {
      type: "resource",
      resource: {
        uri: `file:///${encodeURIComponent(name)}`,
        mimeType: blob.type,
        blob: await toBase64(blob),
      },
    };
  } catch {
    const url = await freshUrl(host, task.id, out.index);
    if (!url) throw new Error("the output could be read neither whole nor by its URL");
    return { type: "resource_link", uri: url, name, mimeType };
  }
}

/**
 * Gives the user the output's file on their device, never a path on the server. Where the host
 * downloads (`ui/download-file`), it gets the bytes embedded (hosts save an embedded blob as a file
 * named by the URI's last segment, as the ext-apps SDK's own examples name it `file:///…`), read
 * through the host as the view reads media; a host may fetch no `generation://` link (the MCP
 * Inspector opens only http(s) links), so where the bytes cannot be read, a freshly signed URL.
 * Where it does not download but opens links (`ui/open-link`), it opens a freshly signed URL; where
 * it does neither, the view shows that URL to open or copy.
 */
async function download(host: Host, task: Task, out: Output, status: HTMLElement): Promise<void> {
  const asset = out.asset;
  if (!asset) return;
  const ext = asset.mimeType.split("/")[1]?.split(/[;+]/)[0] ?? "bin";
  const name = `${task.id}-${out.index}.${ext}`;
  status.textContent = "Preparing the download…";
  try {
    if (host.capabilities.downloadFile !== undefined) {
      const item = await downloadItem(host, task, out, name, asset.mimeType);
      const r = (await host.request("ui/download-file", { contents: [item] })) as { isError?: boolean };
      status.textContent = r.isError ? "The host did not download it." : `Download of ${name} started.`;
      return;
    }
    const url = await freshUrl(host, task.id, out.index);
    if (!url) throw new Error("no signed URL for this output");
    if (host.capabilities.openLinks !== undefined) {
      const r = (await host.request("ui/open-link", { url })) as { isError?: boolean };
      if (!r.isError) {
        status.textContent = `Opened the link to ${name} (it expires; Download again for a fresh one).`;
        return;
      }
    }
    status.replaceChildren(
      "This host downloads nothing from the view: ",
      h("a", { href: url, target: "_blank", rel: "noopener", download: name }, `open ${name}`),
      " (a signed link that expires), or copy it.",
    );
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
  bar.append(button("Download", () => void download(host, task, out, status)));
  bar.append(button("Copy task ID", () => void copyText(task.id, status)));
  if (identity) bar.append(button("Copy identity", () => void copyText(identity, status)));
  bar.append(status);
  return bar;
}
