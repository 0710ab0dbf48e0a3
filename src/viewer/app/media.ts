/**
 * Puts an output's bytes into an image, audio or video element. The signed URL first (its origin
 * is in the view's CSP when the server declared it); where the host's CSP or an expired URL stops
 * it, the bytes read through the host and played from a blob: URL (the task output resource whole,
 * or, past a host's result size limit, in chunks through the app-only tool); where blob: is refused
 * too (the MCP Inspector allows exactly the declared origins), a freshly signed URL.
 */
import type { Host } from "./protocol.js";
import type { CallResult, Task } from "./types.js";

export type MediaElement = HTMLImageElement | HTMLAudioElement | HTMLVideoElement;
export type Source = "url" | "fresh-url" | "resource" | "chunks";

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

/**
 * Base64 of a blob's bytes, for an embedded resource or an upload chunk: the browser's own encoder
 * (a data: URL read by FileReader), several times faster than encoding in script.
 */
export function toBase64(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve(url.slice(url.indexOf(",") + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.readAsDataURL(blob);
  });
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

/** A fresh signed URL of the output (the task's own may have expired), through the app-only read. */
export async function freshUrl(host: Host, taskId: string, index: number): Promise<string | undefined> {
  const r = (await host.request("tools/call", {
    name: "viewer_read_task",
    arguments: { taskId },
  })) as CallResult;
  const fresh = r.structuredContent?.task as Task | undefined;
  return fresh?.outputs.find((o) => o.index === index)?.asset?.url;
}

/** Why an output could not be shown, in words for the person looking at the view. */
export class NotShown extends Error {}

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
    // Blocked by the frame's CSP, or the URL expired.
  }
  let reason: NotShown;
  try {
    const read = await readBytes(host, r, onProgress);
    try {
      await loaded(el, URL.createObjectURL(read.blob));
      return settle(read.source);
    } catch {
      reason = new NotShown("this host's content policy lets the view show no media from the service");
    }
  } catch {
    reason = new NotShown("the host could not pass its bytes to this view");
  }
  // The URL may just have expired, where the host allows its origin and nothing else (the MCP
  // Inspector allows no blob:): a freshly signed one.
  const fresh = await freshUrl(host, r.taskId, r.index).catch(() => undefined);
  if (fresh && fresh !== r.url) {
    try {
      await loaded(el, fresh);
      return settle("fresh-url");
    } catch {
      // Refused as the first one was.
    }
  }
  throw reason;
}
