import { inflateSync } from "node:zlib";
import { expect } from "vitest";
import { crc32 } from "../../src/sandbox/media/crc32.js";
import { PNG_SIGNATURE } from "../../src/sandbox/media/png.js";

/** Walks PNG chunks, checking each CRC, and returns IHDR dims plus the inflated image data. */
export function decodePng(png: Uint8Array): { width: number; height: number; raw: Buffer } {
  const buf = Buffer.from(png);
  expect(buf.subarray(0, 8).equals(Buffer.from(PNG_SIGNATURE))).toBe(true);
  let off = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  let sawEnd = false;
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString("latin1", off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    expect(buf.readUInt32BE(off + 8 + len)).toBe(crc32(buf.subarray(off + 4, off + 8 + len)));
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
    } else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") sawEnd = true;
    off += 12 + len;
  }
  expect(sawEnd).toBe(true);
  return { width, height, raw: inflateSync(Buffer.concat(idat)) };
}
