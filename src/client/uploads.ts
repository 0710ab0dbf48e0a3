/**
 * Uploads, checked before anything is sent: the type comes from the file's bytes (not its
 * name), the size from the file system, and the body is streamed from disk so a 30 MiB
 * upload never sits in memory. file-type is imported on first use: start-up stays cheap.
 */
import { openAsBlob } from "node:fs";
import { type FileHandle, open, stat } from "node:fs/promises";
import { basename } from "node:path";
import { LIMITS } from "../config/service-limits.js";
import { lazy } from "../shared/lazy.js";
import { ArgumentError } from "../shared/local-refusals.js";
import { byteSize } from "../shared/wording.js";

/**
 * A file by path, its bytes, or a stream of `size` bytes whose first ones are `head` (the media
 * viewer's staged chunks, src/calls/uploads/upload-staging.ts), typed by `head`.
 */
export type AssetSource =
  | { path: string }
  | { data: Uint8Array }
  | { stream: () => ReadableStream<Uint8Array>; size: number; head: Uint8Array };
export interface VoiceSource {
  path: string;
  /** The name sent with the file, when `path` does not end in it (a descriptor's path). */
  filename?: string;
  duration: number;
  rightsConfirmed: true;
}

export interface PreparedAsset {
  mimeType: string;
  size: number;
  filename: string | undefined;
  /** `recycle`: reuse a few read buffers (only for a consumer that keeps no chunk). */
  body(recycle: boolean): ReadableStream<Uint8Array> | Uint8Array;
}

const MEDIA_PREFIXES = ["image/", "video/", "audio/"];
/** The voice table's formats (MP3, WAV, OGG, M4A, AAC, FLAC, WebM) as file-type names them. */
const VOICE_EXTENSIONS = new Set(["mp3", "wav", "ogg", "oga", "opus", "m4a", "aac", "flac", "webm"]);

const fileType = lazy(() => import("file-type"));

async function sniffFile(path: string): Promise<{ ext: string; mime: string } | undefined> {
  const { fileTypeFromFile } = await fileType();
  return fileTypeFromFile(path);
}

async function sniffBytes(data: Uint8Array): Promise<{ ext: string; mime: string } | undefined> {
  const { fileTypeFromBuffer } = await fileType();
  return fileTypeFromBuffer(data);
}

/** A regular file's size, or an ArgumentError naming `field` (without the file's contents). */
async function regularFileSize(path: string, field: string): Promise<number> {
  if (typeof path !== "string" || path === "") throw new ArgumentError(field, "must be a file path");
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new ArgumentError(field, "must be a regular file");
    return s.size;
  } catch (err) {
    if (err instanceof ArgumentError) throw err;
    throw new ArgumentError(field, `cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/**
 * X-Filename is a header: it must be Latin-1 without control characters. Characters
 * outside printable ASCII are percent-encoded; the result is kept within 255 characters.
 */
function headerFilename(name: string): string | undefined {
  const chars = Array.from(name.replace(/[\\/]/g, "_"));
  const enc = (c: string) => (/^[\x20-\x7e]$/.test(c) && c !== "%" ? c : encodeURIComponent(c));
  let out = "";
  for (const c of chars) {
    const piece = enc(c);
    if (out.length + piece.length > LIMITS.asset.filename) break;
    out += piece;
  }
  out = out.trim();
  return out === "" ? undefined : out;
}

export async function prepareAsset(src: AssetSource, filename?: string): Promise<PreparedAsset> {
  const max = LIMITS.asset.maxBytes;
  const name = filename !== undefined ? headerFilename(filename) : undefined;
  if ("stream" in src) {
    const type = await sniffBytes(src.head);
    return { mimeType: mediaType(type, "data"), size: src.size, filename: name, body: src.stream };
  }
  if ("data" in src) {
    if (!(src.data instanceof Uint8Array)) throw new ArgumentError("data", "must be bytes");
    const size = src.data.byteLength;
    if (size < 1) throw new ArgumentError("data", "is empty");
    if (size > max) {
      throw new ArgumentError("data", `must be at most ${byteSize(max)}; got ${byteSize(size)}`);
    }
    const type = await sniffBytes(src.data);
    return { mimeType: mediaType(type, "data"), size, filename: name, body: () => src.data };
  }
  const size = await regularFileSize(src.path, "path");
  if (size < 1) throw new ArgumentError("path", "is an empty file");
  if (size > max)
    throw new ArgumentError("path", `must be at most ${byteSize(max)}; the file has ${byteSize(size)}`);
  const type = await sniffFile(src.path);
  const path = src.path;
  return {
    mimeType: mediaType(type, "path"),
    size,
    filename: name ?? headerFilename(basename(path)),
    body: (recycle) => fileStream(path, size, recycle),
  };
}

const READ_CHUNK = 64 * 1024;
const RING_SIZE = 4;

/**
 * The file as a pull-driven web stream: a chunk is read only when fetch asks for one, so
 * only a few chunks exist at a time whatever the file's size. Exactly `size` bytes are sent
 * even if the file grows meanwhile, keeping Content-Length true; a file that shrinks fails
 * the upload rather than padding it.
 */
function fileStream(path: string, size: number, recycle: boolean): ReadableStream<Uint8Array> {
  let handle: FileHandle | undefined;
  let position = 0;
  const ring: Buffer[] = [];
  let turn = 0;
  const buffer = (want: number): Buffer => {
    if (!recycle) return Buffer.allocUnsafe(want);
    // A chunk is written out before the next is pulled; RING_SIZE leaves a wide margin.
    const slot = turn++ % RING_SIZE;
    ring[slot] ??= Buffer.allocUnsafe(READ_CHUNK);
    return ring[slot].subarray(0, want);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        handle ??= await open(path, "r");
        const want = Math.min(READ_CHUNK, size - position);
        const buf = buffer(want);
        const { bytesRead } = await handle.read(buf, 0, want, position);
        if (bytesRead === 0) {
          await handle.close();
          controller.error(new Error(`${path} shrank while being uploaded`));
          return;
        }
        position += bytesRead;
        controller.enqueue(bytesRead === want ? buf : buf.subarray(0, bytesRead));
        if (position >= size) {
          await handle.close();
          controller.close();
        }
      },
      async cancel() {
        await handle?.close();
      },
    },
    { highWaterMark: 0 },
  );
}

function mediaType(type: { mime: string } | undefined, field: string): string {
  if (type && MEDIA_PREFIXES.some((p) => type.mime.startsWith(p))) return type.mime;
  throw new ArgumentError(
    field,
    `must be an image, video or audio file by its content${type ? ` (found ${type.mime})` : " (type not recognised)"}`,
  );
}

export async function prepareVoice(v: VoiceSource): Promise<{ blob: Blob; filename: string }> {
  if ((v as { rightsConfirmed: unknown }).rightsConfirmed !== true) {
    throw new ArgumentError(
      "rightsConfirmed",
      "must be true: confirm you have permission to clone this voice",
    );
  }
  const { min, max } = LIMITS.voice.duration;
  if (
    typeof v.duration !== "number" ||
    !Number.isFinite(v.duration) ||
    v.duration < min ||
    v.duration > max
  ) {
    throw new ArgumentError("duration", `must be between ${min} and ${max} seconds`);
  }
  const size = await regularFileSize(v.path, "path");
  if (size < LIMITS.voice.minBytes) throw new ArgumentError("path", "is an empty file (at least 1 byte)");
  if (size > LIMITS.voice.maxBytes) {
    throw new ArgumentError(
      "path",
      `must be at most ${byteSize(LIMITS.voice.maxBytes)}; the file has ${byteSize(size)}`,
    );
  }
  const type = await sniffFile(v.path);
  if (!type || !VOICE_EXTENSIONS.has(type.ext)) {
    throw new ArgumentError(
      "path",
      `must be MP3, WAV, OGG, M4A, AAC, FLAC or WebM audio by its content${type ? ` (found ${type.mime})` : ""}`,
    );
  }
  // A disk-backed Blob: FormData streams it and sets the boundary; nothing is buffered.
  const blob = await openAsBlob(v.path, { type: type.mime });
  return { blob, filename: v.filename ?? basename(v.path) };
}
