/**
 * A minimal PNG encoder (8-bit truecolour, filter 0; deflate and CRC-32 from node:zlib, whose
 * `crc32` exists from Node 20.15 and is the IEEE CRC-32 PNG chunks use) so sandbox images are real
 * files any viewer opens, with no image dependency.
 */
import { crc32, deflateSync } from "node:zlib";
import { drawScene, type Raster } from "./raster.js";

export const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  out.set(data, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

export function encodePng(raster: Raster): Buffer {
  const { width, height, rgb } = raster;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: truecolour
  // compression, filter and interlace methods stay 0
  const stride = width * 3;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = 0; // filter type None
    raw.set(rgb.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  }
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", new Uint8Array(0)),
  ]);
}

/** Pixel size per aspect ratio: small, so outputs stay light, but true to the ratio. */
export function imageSize(ratio: string): { width: number; height: number } {
  const m = /^(\d+):(\d+)$/.exec(ratio);
  const w = Number(m?.[1] ?? 1);
  const h = Number(m?.[2] ?? 1);
  const long = 320;
  if (w === h) return { width: 256, height: 256 };
  return w > h
    ? { width: long, height: Math.round((long * h) / w) }
    : { width: Math.round((long * w) / h), height: long };
}

export function renderImage(seed: string, ratio: string): Buffer {
  const { width, height } = imageSize(ratio);
  return encodePng(drawScene(seed, width, height));
}
