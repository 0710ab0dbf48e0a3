/**
 * A small but real MP4 (ISO BMFF): an H.264 video track (see h264.ts) at 4 frames per second,
 * one key frame per second so the picture moves, and (unless left out) a mono 8 kHz mu-law
 * audio track, as generated videos usually have one. The movie header carries the duration.
 */

import { type H264Stream, h264Stream, idrFrame, skipFrame } from "./h264.js";
import { drawScene } from "./raster.js";

const FPS = 4;
const TIMESCALE = 1000;
const AUDIO_RATE = 8000;

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}
function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n & 0xffff);
  return b;
}
const zeros = (n: number): Buffer => Buffer.alloc(n);

function box(type: string, ...parts: Uint8Array[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([u32(8 + body.length), Buffer.from(type, "latin1"), body]);
}
function fullBox(type: string, version: number, flags: number, ...parts: Uint8Array[]): Buffer {
  return box(type, u32((version << 24) | flags), ...parts);
}
const MATRIX = Buffer.concat([0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000].map(u32));

interface TrackSpec {
  id: number;
  handler: "vide" | "soun";
  timescale: number;
  duration: number; // in the track's timescale
  sampleEntry: Buffer;
  /** Per-sample sizes; a single entry with `sampleCount` means every sample has that size. */
  sampleSizes: number[];
  sampleCount?: number;
  sampleDelta: number;
  chunkOffsets: number[];
  samplesPerChunk: number;
  syncSamples?: number[];
  width?: number;
  height?: number;
}

function trak(t: TrackSpec, movieDuration: number): Buffer {
  const video = t.handler === "vide";
  const tkhd = fullBox(
    "tkhd",
    0,
    3,
    u32(0),
    u32(0),
    u32(t.id),
    u32(0),
    u32(movieDuration),
    zeros(8),
    u16(0),
    u16(0),
    u16(video ? 0 : 0x0100),
    u16(0),
    MATRIX,
    u32((t.width ?? 0) << 16),
    u32((t.height ?? 0) << 16),
  );
  const mdhd = fullBox("mdhd", 0, 0, u32(0), u32(0), u32(t.timescale), u32(t.duration), u16(0x55c4), u16(0));
  const name = video ? "SandboxVideo\0" : "SandboxSound\0";
  const hdlr = fullBox("hdlr", 0, 0, u32(0), Buffer.from(t.handler, "latin1"), zeros(12), Buffer.from(name));
  const mediaHeader = video ? fullBox("vmhd", 0, 1, zeros(8)) : fullBox("smhd", 0, 0, zeros(4));
  const dinf = box("dinf", fullBox("dref", 0, 0, u32(1), fullBox("url ", 0, 1)));
  const sampleCount = t.sampleCount ?? t.sampleSizes.length;
  const sameSize = t.sampleCount !== undefined;
  const stbl = box(
    "stbl",
    fullBox("stsd", 0, 0, u32(1), t.sampleEntry),
    fullBox("stts", 0, 0, u32(1), u32(sampleCount), u32(t.sampleDelta)),
    ...(t.syncSamples ? [fullBox("stss", 0, 0, u32(t.syncSamples.length), ...t.syncSamples.map(u32))] : []),
    fullBox("stsc", 0, 0, u32(1), u32(1), u32(t.samplesPerChunk), u32(1)),
    sameSize
      ? fullBox("stsz", 0, 0, u32(t.sampleSizes[0] ?? 0), u32(sampleCount))
      : fullBox("stsz", 0, 0, u32(0), u32(sampleCount), ...t.sampleSizes.map(u32)),
    fullBox("stco", 0, 0, u32(t.chunkOffsets.length), ...t.chunkOffsets.map(u32)),
  );
  return box("trak", tkhd, box("mdia", mdhd, hdlr, box("minf", mediaHeader, dinf, stbl)));
}

/** Pixel size per aspect ratio: small and even, true to the ratio. */
export function videoSize(ratio: string): { width: number; height: number } {
  const m = /^(\d+):(\d+)$/.exec(ratio);
  const w = Number(m?.[1] ?? 16);
  const h = Number(m?.[2] ?? 9);
  const long = 128;
  const even = (n: number): number => Math.max(16, Math.round(n / 2) * 2);
  if (w === h) return { width: 96, height: 96 };
  return w > h
    ? { width: long, height: even((long * h) / w) }
    : { width: even((long * w) / h), height: long };
}

/** The H.264 samples, length-prefixed: a key frame each second, skip frames between. */
function videoSamples(
  seed: string,
  secs: number,
  width: number,
  height: number,
): { stream: H264Stream; frames: Buffer[]; sync: number[] } {
  const stream = h264Stream(width, height);
  const frames: Buffer[] = [];
  const sync: number[] = [];
  for (let f = 0; f < secs * FPS; f++) {
    const sec = Math.floor(f / FPS);
    const nalu =
      f % FPS === 0
        ? idrFrame(stream, drawScene(seed, width, height, sec / secs), sec)
        : skipFrame(stream, f % FPS);
    if (f % FPS === 0) sync.push(f + 1);
    frames.push(Buffer.concat([u32(nalu.length), nalu]));
  }
  return { stream, frames, sync };
}

function avc1Entry(stream: H264Stream, width: number, height: number): Buffer {
  const avcC = box(
    "avcC",
    Uint8Array.of(1, stream.sps[1] as number, stream.sps[2] as number, stream.sps[3] as number, 0xff, 0xe1),
    u16(stream.sps.length),
    stream.sps,
    Uint8Array.of(1),
    u16(stream.pps.length),
    stream.pps,
  );
  const compressor = zeros(32);
  return box(
    "avc1",
    zeros(6),
    u16(1),
    zeros(16),
    u16(width),
    u16(height),
    u32(0x00480000),
    u32(0x00480000),
    u32(0),
    u16(1),
    compressor,
    u16(0x18),
    u16(0xffff),
    avcC,
  );
}

function ulawEntry(): Buffer {
  return box(
    "ulaw",
    zeros(6),
    u16(1),
    u16(0),
    u16(0),
    u32(0),
    u16(1),
    u16(16),
    u16(0),
    u16(0),
    u32(AUDIO_RATE << 16),
  );
}

/** The movie header: where a reader finds the whole movie's duration (see duration.ts). */
function movieHeader(duration: number, nextTrackId: number): Buffer {
  return fullBox(
    "mvhd",
    0,
    0,
    u32(0),
    u32(0),
    u32(TIMESCALE),
    u32(duration),
    u32(0x00010000),
    u16(0x0100),
    zeros(10),
    MATRIX,
    zeros(24),
    u32(nextTrackId),
  );
}

export function renderVideo(
  seed: string,
  seconds: number,
  ratio: string,
  o: { audio?: boolean } = {},
): Buffer {
  const withAudio = o.audio ?? true;
  const secs = Math.max(1, Math.round(seconds));
  const { width, height } = videoSize(ratio);
  const { stream, frames, sync } = videoSamples(seed, secs, width, height);
  const audio = Buffer.alloc(withAudio ? secs * AUDIO_RATE : 0, 0xff); // mu-law silence
  const ftyp = box(
    "ftyp",
    Buffer.from("isom", "latin1"),
    u32(512),
    Buffer.from("isomiso2avc1mp41", "latin1"),
  );
  const mdatHeader = 8;
  let offset = ftyp.length + mdatHeader;
  const videoOffsets = frames.map((fr) => {
    const at = offset;
    offset += fr.length;
    return at;
  });
  const audioOffsets = Array.from({ length: secs }, (_, i) => offset + i * AUDIO_RATE);
  const mdat = box("mdat", ...frames, audio);
  const movieDuration = secs * TIMESCALE;
  const videoTrack: TrackSpec = {
    id: 1,
    handler: "vide",
    timescale: TIMESCALE,
    duration: movieDuration,
    sampleEntry: avc1Entry(stream, width, height),
    sampleSizes: frames.map((f) => f.length),
    sampleDelta: TIMESCALE / FPS,
    chunkOffsets: videoOffsets,
    samplesPerChunk: 1,
    syncSamples: sync,
    width,
    height,
  };
  const audioTrack: TrackSpec = {
    id: 2,
    handler: "soun",
    timescale: AUDIO_RATE,
    duration: secs * AUDIO_RATE,
    sampleEntry: ulawEntry(),
    sampleSizes: [1],
    sampleCount: secs * AUDIO_RATE,
    sampleDelta: 1,
    chunkOffsets: audioOffsets,
    samplesPerChunk: AUDIO_RATE,
  };
  const tracks = withAudio ? [videoTrack, audioTrack] : [videoTrack];
  const moov = box(
    "moov",
    movieHeader(movieDuration, tracks.length + 1),
    ...tracks.map((t) => trak(t, movieDuration)),
  );
  return Buffer.concat([ftyp, mdat, moov]);
}
