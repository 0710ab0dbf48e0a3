/**
 * The viewer's upload form, opened by upload_asset or upload_voice called with no path or data:
 * a drop zone and a file picker, the accepted kinds and limits in words, for a voice the rights
 * confirmation the service requires (a box the user ticks). What the view can judge it refuses
 * before anything is sent (too large, empty, the box unticked); the server judges the bytes. Once
 * the service has the file, the view shows the asset (ID, kind, state, a preview) or the voice, and
 * hands its ID to the model (upload-send.ts).
 */
import { h } from "./dom.js";
import type { Host } from "./protocol.js";
import type { Asset } from "./types.js";
import { handOff, sendFile, type Uploaded, UploadFailed, type UploadKind } from "./upload-send.js";

export interface UploadRequest {
  kind: UploadKind;
  maxBytes: number;
  minSeconds?: number;
  maxSeconds?: number;
}

const MiB = 1024 * 1024;
const size = (n: number) =>
  n >= MiB ? `${(n / MiB).toFixed(1)} MiB` : `${Math.max(1, Math.round(n / 1024))} KiB`;

function words(req: UploadRequest): { title: string; limits: string; accept: string } {
  const max = `${Math.round(req.maxBytes / MiB)} MiB`;
  if (req.kind === "voice") {
    return {
      title: "Upload a recording as a private voice",
      limits: `MP3, WAV, OGG, M4A, AAC, FLAC or WebM audio, ${req.minSeconds ?? 15} to ${req.maxSeconds ?? 300} seconds, up to ${max}. It becomes a private voice in your account, for voice cloning; uploading is free.`,
      accept: "audio/*,.mp3,.wav,.ogg,.m4a,.aac,.flac,.webm",
    };
  }
  return {
    title: "Upload an image, video or audio file",
    limits: `From your device, up to ${max}. It becomes an asset the assistant can use (a first frame, a reference, a soundtrack, a video to analyse); uploading is free.`,
    accept: "image/*,video/*,audio/*",
  };
}

/**
 * The uploaded asset's preview: its signed URL where there is one and the host allows it, else the
 * chosen file itself. An image is decoded straight from the file (createImageBitmap needs no URL,
 * so it shows even where the host allows no blob: or data: source, as the MCP Inspector does);
 * audio and video play from a blob: URL where the host allows one.
 */
function preview(asset: Asset, file: File): HTMLElement | null {
  const label = `Uploaded ${asset.kind} ${asset.id}`;
  const wrap = h("div", { class: "player upload-preview" });
  const none = () =>
    wrap.replaceChildren(
      h(
        "p",
        { class: "note" },
        "No preview here: this host's content policy shows none. The upload itself is done.",
      ),
    );
  if (asset.kind === "image") {
    const canvas = h("canvas", { role: "img", "aria-label": label });
    const drawn = () =>
      createImageBitmap(file).then((bitmap) => {
        canvas.width = bitmap.width;
        canvas.height = bitmap.height;
        canvas.getContext("2d")?.drawImage(bitmap, 0, 0);
        wrap.replaceChildren(canvas);
      }, none);
    if (!asset.url) void drawn();
    else {
      const img = h("img", { alt: label, src: asset.url });
      img.addEventListener("error", () => void drawn());
      wrap.append(img);
    }
    return wrap;
  }
  if (asset.kind !== "audio" && asset.kind !== "video") return null;
  const el = h(asset.kind, { controls: true, preload: "metadata", "aria-label": label });
  const sources = [asset.url, URL.createObjectURL(file)].filter((u): u is string => typeof u === "string");
  const next = () => {
    const src = sources.shift();
    if (src === undefined) none();
    else el.src = src;
  };
  el.addEventListener("error", next);
  wrap.append(el);
  next();
  return wrap;
}

const HANDED = {
  context:
    "The assistant has the ID for its next answer: tell it what to do with it (for example, “now animate it”).",
  message: "The ID went to the conversation as your message.",
};

async function showDone(
  box: HTMLElement,
  host: Host,
  up: Uploaded,
  file: File,
  again: () => void,
): Promise<void> {
  const id = "asset" in up ? up.asset.id : up.voice.id;
  const line =
    "asset" in up
      ? `Uploaded ${file.name}: asset ${up.asset.id} · ${up.asset.kind} · ${up.asset.state ?? "state unknown"}`
      : `Uploaded ${file.name}: private voice ${up.voice.id} · ${up.voice.name}`;
  const handed = h("p", { class: "note handed", role: "status" }, "Handing the ID to the assistant…");
  const copy = h("button", { type: "button" }, "Copy ID");
  copy.addEventListener("click", () => {
    void navigator.clipboard.writeText(id).then(
      () => {
        handed.textContent = `Copied ${id}`;
      },
      () => {
        handed.textContent = `Copy this by hand: ${id}`;
      },
    );
  });
  const another = h("button", { type: "button" }, "Upload another file");
  another.addEventListener("click", again);
  box.replaceChildren(
    h("p", { class: "status uploaded", "data-id": id }, line),
    ...["asset" in up ? preview(up.asset, file) : null].filter((e) => e !== null),
    handed,
    h("div", { class: "actions" }, copy, another),
  );
  const way = await handOff(host, up, file.name);
  handed.textContent = way
    ? HANDED[way]
    : `This host took no message from the view: copy the ID (${id}) into your message.`;
}

/** What the view refuses on its own, before anything is sent; undefined when the file may go. */
function refusedHere(file: File, req: UploadRequest): string | undefined {
  if (file.size === 0) return `${file.name} is empty. Nothing was sent.`;
  if (file.size <= req.maxBytes) return undefined;
  const exact = (n: number) => `${size(n)}, ${n.toLocaleString("en-US")} bytes`;
  return `${file.name} is too large (${exact(file.size)}); the limit is ${exact(req.maxBytes)}. Nothing was sent.`;
}

/** A drop zone with the file picker's button: `choose` gets the file dropped or picked. */
function dropZone(accept: string, choose: (file: File | undefined) => void): HTMLElement[] {
  const input = h("input", { type: "file", accept, hidden: true });
  const pick = h("button", { type: "button", class: "pick" }, "Choose a file");
  pick.addEventListener("click", () => input.click());
  input.addEventListener("change", () => choose(input.files?.[0]));
  const drop = h("div", { class: "drop" }, "Drop a file here, or ", pick);
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    choose(e.dataTransfer?.files[0]);
  });
  return [drop, input];
}

const RIGHTS = "I have the speaker's permission to clone this voice (the service requires it)";

/** The form in `box`; `done` shows the result once the service has the file. */
function uploadForm(
  box: HTMLElement,
  host: Host,
  req: UploadRequest,
  done: (up: Uploaded, file: File) => void,
): void {
  const w = words(req);
  let chosen: File | undefined;
  let sending = false;
  const rights = h("input", { type: "checkbox", id: "rights" });
  const send = h("button", { type: "button", class: "send", disabled: true }, "Upload");
  const bar = h("progress", { max: 100, value: 0, hidden: true });
  const status = h("p", { class: "upload-status", role: "status" });
  const say = (text: string, refused = false) => {
    status.textContent = refused ? `Not uploaded: ${text}` : text;
    status.className = refused ? "upload-status error" : "upload-status";
  };
  const choose = (file: File | undefined) => {
    // One upload at a time: a file dropped meanwhile waits for the user to choose again.
    if (!file || sending) return;
    const refusal = refusedHere(file, req);
    chosen = refusal === undefined ? file : undefined;
    send.disabled = chosen === undefined;
    if (refusal !== undefined) say(refusal, true);
    else say(`Ready: ${file.name} (${size(file.size)}${file.type ? `, ${file.type}` : ""}).`);
  };
  send.addEventListener("click", () => {
    const file = chosen;
    if (!file || sending) return;
    if (req.kind === "voice" && !rights.checked) {
      return say(
        "tick the box to confirm you have the speaker's permission to clone this voice; the service requires it. Nothing was sent.",
        true,
      );
    }
    bar.hidden = false;
    sending = send.disabled = true;
    say(`Uploading ${file.name}…`);
    sendFile(host, file, req.kind, (share, toService) => {
      bar.value = Math.round(share * 100);
      say(
        toService
          ? `Sending ${file.name} to the service…`
          : `Uploading ${file.name}: ${Math.round(share * 100)}%`,
      );
    }).then(
      (up) => done(up, file),
      (err: unknown) => {
        bar.hidden = true;
        sending = send.disabled = false;
        const what =
          err instanceof UploadFailed ? err.message : `The upload failed: ${(err as Error).message}.`;
        say(/choose the file again/i.test(what) ? what : `${what} Choose the file again to retry.`, true);
      },
    );
  });
  box.replaceChildren(
    h("h2", {}, w.title),
    h("p", { class: "limits" }, w.limits),
    ...dropZone(w.accept, choose),
    ...(req.kind === "voice" ? [h("label", { class: "rights" }, rights, ` ${RIGHTS}`)] : []),
    h("div", { class: "actions" }, send, bar),
    status,
  );
}

/** Shows the upload form for `req` in `root`, and, once uploaded, the asset or voice. */
export function showUpload(root: HTMLElement, host: Host, req: UploadRequest): void {
  const box = h("section", { class: "upload", "aria-label": words(req).title });
  const form = () =>
    uploadForm(box, host, req, (up, file) => {
      void showDone(box, host, up, file, form);
    });
  form();
  root.replaceChildren(box);
}
