/**
 * Which chunks of a device upload the store holds: one bit per chunk, kept in the upload's record
 * as base64 (a 50 MiB voice's 100 chunks are 20 characters), so a record's compare-and-set adds
 * chunks in any order, whichever replica took each (src/calls/uploads/upload-store.ts).
 */

/** The set of `count` chunks from its base64 (an earlier record's `next` alone: every chunk before it). */
export function heldChunks(have: string | undefined, next: number, count: number): Uint8Array {
  const bits = new Uint8Array(Math.ceil(count / 8));
  if (have !== undefined) bits.set(Buffer.from(have, "base64").subarray(0, bits.length));
  else for (let seq = 0; seq < Math.min(next, count); seq++) setHeld(bits, seq);
  return bits;
}

export const isHeld = (bits: Uint8Array, seq: number): boolean =>
  (((bits[seq >> 3] ?? 0) >> (seq & 7)) & 1) === 1;

export function setHeld(bits: Uint8Array, seq: number): void {
  bits[seq >> 3] = (bits[seq >> 3] ?? 0) | (1 << (seq & 7));
}

/** The first chunk not held, or `count` when every one is. */
export function firstMissing(bits: Uint8Array, count: number): number {
  for (let seq = 0; seq < count; seq++) if (!isHeld(bits, seq)) return seq;
  return count;
}

export const heldText = (bits: Uint8Array): string => Buffer.from(bits).toString("base64");
