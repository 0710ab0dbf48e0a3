/**
 * An ISO BMFF (MP4, MOV) file's duration from its movie header, the `mvhd` box inside `moov`:
 * its duration divided by its timescale. This is where players and real services read it; it
 * does not depend on an audio track being present. Boxes are walked by their declared sizes
 * (32-bit, 64-bit `largesize`, or 0 for "to the end"), never past the bytes given.
 */

interface Box {
  type: string;
  /** Where the box's payload starts and ends, as offsets into the whole buffer. */
  start: number;
  end: number;
}

function* boxes(bytes: Uint8Array, from: number, to: number): Generator<Box> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = from;
  while (at + 8 <= to) {
    let size = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    let header = 8;
    if (size === 1) {
      if (at + 16 > to) return;
      const large = view.getBigUint64(at + 8);
      if (large > BigInt(Number.MAX_SAFE_INTEGER)) return;
      size = Number(large);
      header = 16;
    } else if (size === 0) {
      size = to - at;
    }
    if (size < header || at + size > to) return;
    yield { type, start: at + header, end: at + size };
    at += size;
  }
}

const find = (bytes: Uint8Array, type: string, from: number, to: number): Box | undefined => {
  for (const b of boxes(bytes, from, to)) if (b.type === type) return b;
  return undefined;
};

/** Seconds, or undefined when the bytes hold no readable movie header (or it says "unknown"). */
export function mp4Duration(bytes: Uint8Array): number | undefined {
  const moov = find(bytes, "moov", 0, bytes.byteLength);
  if (!moov) return undefined;
  const mvhd = find(bytes, "mvhd", moov.start, moov.end);
  if (!mvhd) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = bytes[mvhd.start];
  // After version and flags (4 bytes): creation and modification times (4 or 8 bytes each),
  // then the timescale (4 bytes) and the duration (4 or 8 bytes).
  const wide = version === 1;
  if (version !== 0 && !wide) return undefined;
  const at = mvhd.start + 4 + (wide ? 16 : 8);
  if (at + (wide ? 12 : 8) > mvhd.end) return undefined;
  const timescale = view.getUint32(at);
  const duration = wide ? view.getBigUint64(at + 4) : BigInt(view.getUint32(at + 4));
  // All ones is the format's "duration unknown".
  const unknown = wide ? 0xffffffffffffffffn : 0xffffffffn;
  if (timescale === 0 || duration === unknown) return undefined;
  return Number(duration) / timescale;
}
