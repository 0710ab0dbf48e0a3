/**
 * What an upload must be, judged by its bytes: any image, video or audio for an asset; one of the
 * voice table's audio formats for a voice, lasting 15 to 300 s. Shared by uploads by path or data
 * (src/tools/upload_asset.ts, upload_voice.ts) and by the media viewer's uploads in chunks
 * (src/calls/uploads/chunked-upload.ts), so each refusal reads the same whichever way the file came.
 */

import { LIMITS } from "../../config/service-limits.js";
import { lazy } from "../../shared/lazy.js";
import { ArgumentError } from "../../shared/local-refusals.js";
import type { MediaType } from "../files/files.js";

const MEDIA = /^(image|video|audio)\//;
// MP3, WAV, OGG, M4A, AAC, FLAC or WebM audio, as file-type names them.
const VOICE_AUDIO = new Set(["mp3", "wav", "ogg", "oga", "opus", "m4a", "aac", "flac", "webm"]);

/** Why these bytes are no asset, or undefined when they are image, video or audio. */
export const notMedia = (t: MediaType | undefined): string | undefined =>
  t && MEDIA.test(t.mime)
    ? undefined
    : `is ${t ? t.mime : "not a recognizable media file"}; uploads must be image, video or audio`;

/** Why these bytes are no voice recording, or undefined when they are one of the voice formats. */
export const notVoice = (t: MediaType | undefined): string | undefined =>
  t && VOICE_AUDIO.has(t.ext)
    ? undefined
    : `is ${t ? t.mime : "not recognizable audio"}; voices must be MP3, WAV, OGG, M4A, AAC, FLAC or WebM audio`;

const { min, max } = LIMITS.voice.duration;

/**
 * The bytes of base64 text (A-Z, a-z, 0-9, +, / with = padding), or a refusal naming `field`.
 * Node's decoder skips what is not base64, so text that decodes to fewer bytes than its length
 * promises held something else; judged so, a 683 KiB chunk is checked with no copy of it.
 */
export function decodeBase64(field: string, data: string): Uint8Array {
  const bytes = Buffer.from(data, "base64");
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  if (data.length % 4 !== 0 || bytes.byteLength !== (data.length / 4) * 3 - padding) {
    throw new ArgumentError(field, "is not valid base64 (A-Z, a-z, 0-9, +, / with = padding)");
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Checks base64 text as decodeBase64 does, decoding it into `into` (a buffer reused call after
 * call) rather than a new one: the byte count it holds. A 683 KiB chunk then leaves no 512 KiB
 * buffer behind for the next collection. Text that would not fit is refused as too long.
 */
export function decodeBase64Into(field: string, data: string, into: Buffer): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  const promised = (data.length / 4) * 3 - padding;
  if (promised > into.byteLength) throw new ArgumentError(field, `holds more than ${into.byteLength} bytes`);
  const n = into.write(data, "base64");
  if (data.length % 4 !== 0 || n !== promised) {
    throw new ArgumentError(field, "is not valid base64 (A-Z, a-z, 0-9, +, / with = padding)");
  }
  return n;
}

const musicMetadata = lazy(() => import("music-metadata"));

/** The recording's length in seconds as its metadata says, or undefined when it cannot be read. */
async function measuredDuration(path: string): Promise<number | undefined> {
  const { parseFile } = await musicMetadata();
  try {
    const meta = await parseFile(path, { duration: true, skipCovers: true });
    const seconds = meta.format.duration;
    return seconds !== undefined && Number.isFinite(seconds) ? seconds : undefined;
  } catch {
    return undefined;
  }
}

/** The recording's length in seconds, read from its metadata; refused when it cannot be read. */
export async function readDuration(path: string): Promise<number> {
  const seconds = await measuredDuration(path);
  if (seconds !== undefined) return seconds;
  throw new ArgumentError(
    "duration",
    `could not be read from the audio; pass it in seconds (${min} to ${max})`,
  );
}

/**
 * The length a voice upload is judged and sent with: the one measured from the audio whatever the
 * caller says (a 5 s clip stated as 20 s is refused here, not by the service after the upload);
 * the stated one only where the audio's own cannot be read. Refused outside 15 to 300 s.
 */
export async function voiceDuration(path: string, stated: number | undefined): Promise<number> {
  const measured = await measuredDuration(path);
  const seconds = measured ?? stated ?? (await readDuration(path));
  const said = measured !== undefined && stated !== undefined && Math.abs(stated - measured) >= 0.5;
  checkVoiceDuration(
    seconds,
    said ? ` (measured from the audio; the duration given, ${stated} s, is not used)` : "",
  );
  return seconds;
}

/** Refuses a recording outside the service's 15 to 300 s. */
export function checkVoiceDuration(seconds: number, how = ""): void {
  if (seconds < min || seconds > max) {
    throw new ArgumentError(
      "duration",
      `the audio lasts ${seconds.toFixed(1)} s${how}; the limit is ${min} to ${max} seconds`,
    );
  }
}
