/**
 * Puts an output's bytes into an image, audio or video element. The signed URL first (its origin
 * is in the view's CSP when the server declared it); where the host's CSP or an expired URL stops
 * it, the bytes are read through the host instead and played from a blob: URL: the task output
 * resource whole, or, past a host's result size limit, in chunks through the app-only tool.
 */
import type { Host } from "./protocol.js";
import type { CallResult } from "./types.js";

export type MediaElement = HTMLImageElement | HTMLAudioElement | HTMLVideoElement;
export type Source = "url" | "resource" | "chunks";

export interface OutputRef {
  taskId: string;
  index: number;
  mimeType: string;
  url: string;
}

/** An output's bytes through the host: the resource whole, or, past the host's limit, in chunks. */
export async function readBytes(
  host: Host,
  r: Omit<OutputRef, "url">,
  onProgress: (share: number) => void = () => {},
): Promise<{ blob: Blob; source: Source }> {
  try {
    return { blob: await viaResource(host, r), source: "resource" };
  } catch {
    return { blob: await viaChunks(host, r, onProgress), source: "chunks" };
  }
}

/** Base64 of a blob's bytes, for an embedded resource. */
export async function toBase64(blob: Blob): Promise<string> {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let raw = "";
  for (let i = 0; i < bytes.length; i += 0x8000) raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(raw);
}

/** Resolves once the element has loaded enough to show (or play), rejects on an error. */
function loaded(el: MediaElement, src: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = el instanceof HTMLImageElement ? "load" : "loadedmetadata";
    const done = (err?: Event) => {
      el.removeEventListener(ok, onOk);
      el.removeEventListener("error", onError);
      if (err) reject(new Error(`could not load ${src.slice(0, 40)}`));
      else resolve();
    };
    const onOk = () => done();
    const onError = (e: Event) => done(e);
    el.addEventListener(ok, onOk);
    el.addEventListener("error", onError);
    el.src = src;
  });
}

const outputUri = (r: Omit<OutputRef, "url">) =>
  `generation://tasks/${encodeURIComponent(r.taskId)}/outputs/${r.index}`;

function fromBase64(data: string): Uint8Array<ArrayBuffer> {
  const raw = atob(data);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

async function viaResource(host: Host, r: Omit<OutputRef, "url">): Promise<Blob> {
  const read = (await host.request("resources/read", { uri: outputUri(r) })) as {
    contents?: Array<{ blob?: string; mimeType?: string }>;
  };
  const content = read.contents?.[0];
  if (!content?.blob) throw new Error("the output resource carried no bytes");
  return new Blob([fromBase64(content.blob)], { type: content.mimeType ?? r.mimeType });
}

async function viaChunks(
  host: Host,
  r: Omit<OutputRef, "url">,
  onProgress: (share: number) => void,
): Promise<Blob> {
  const parts: Uint8Array<ArrayBuffer>[] = [];
  let offset = 0;
  let mimeType = r.mimeType;
  for (;;) {
    const result = (await host.request("tools/call", {
      name: "viewer_read_output",
      arguments: { taskId: r.taskId, index: r.index, offset },
    })) as CallResult;
    const chunk = result.structuredContent as
      | { data: string; total: number; done: boolean; mimeType: string }
      | undefined;
    if (result.isError || !chunk) throw new Error("the host could not read the output in chunks");
    const bytes = fromBase64(chunk.data);
    parts.push(bytes);
    offset += bytes.byteLength;
    mimeType = chunk.mimeType;
    onProgress(chunk.total > 0 ? offset / chunk.total : 1);
    if (chunk.done || bytes.byteLength === 0) break;
  }
  return new Blob(parts, { type: mimeType });
}

/** Loads the output into `el`; says which way it came, on the element too (data-source). */
export async function attachMedia(
  host: Host,
  el: MediaElement,
  r: OutputRef,
  onProgress: (share: number) => void = () => {},
): Promise<Source> {
  const settle = (source: Source) => {
    el.dataset.source = source;
    return source;
  };
  try {
    await loaded(el, r.url);
    return settle("url");
  } catch {
    // Blocked by the frame's CSP, or the URL expired: read the bytes through the host.
  }
  const { blob, source } = await readBytes(host, r, onProgress);
  await loaded(el, URL.createObjectURL(blob));
  return settle(source);
}
