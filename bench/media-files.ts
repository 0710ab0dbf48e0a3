/** Large media files for the upload benchmarks (bench/upload.ts, bench/viewer-upload.ts), written a MiB at a time. */
import { randomBytes } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";

const MiB = 1024 * 1024;

/** PNG signature, an IHDR chunk, then an IDAT chunk header: sniffs as image/png. */
const PNG_HEAD = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  Buffer.from("IHDR"),
  Buffer.from([0, 0, 4, 0, 0, 0, 4, 0, 8, 2, 0, 0, 0, 0, 0, 0, 0]),
  Buffer.from([0, 0x10, 0, 0]),
  Buffer.from("IDAT"),
]);

/** Writes `size` random bytes after a PNG head, 1 MiB at a time. */
export function writePngFile(path: string, size: number): void {
  const fd = openSync(path, "w");
  const chunk = randomBytes(Math.min(MiB, size));
  PNG_HEAD.copy(chunk);
  let written = 0;
  while (written < size) {
    written += writeSync(fd, chunk, 0, Math.min(chunk.length, size - written));
    randomBytes(chunk.length).copy(chunk);
  }
  closeSync(fd);
}
