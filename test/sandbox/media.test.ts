import { spawnSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileTypeFromBuffer } from "file-type";
import { parseBuffer } from "music-metadata";
import { describe, expect, it } from "vitest";
import { mp4Duration } from "../../src/sandbox/media/duration.js";
import { renderVideo, videoSize } from "../../src/sandbox/media/mp4.js";
import { imageSize, renderImage } from "../../src/sandbox/media/png.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import { runnableOrSkipped } from "../helpers/chromium.js";
import { decodePng } from "./sandbox-helpers.js";

describe("sandbox media encoders", () => {
  it.each([
    ["1:1", 256, 256],
    ["16:9", 320, 180],
    ["9:16", 180, 320],
  ])("PNG at %s is %dx%d, valid chunks, deterministic per prompt", async (ratio, w, h) => {
    const png = renderImage("a lighthouse", ratio);
    const { width, height, raw } = decodePng(png);
    expect([width, height]).toEqual([w, h]);
    expect(imageSize(ratio)).toEqual({ width: w, height: h });
    expect(raw.length).toBe((w * 3 + 1) * h);
    expect(await fileTypeFromBuffer(png)).toEqual({ ext: "png", mime: "image/png" });
    expect(renderImage("a lighthouse", ratio).equals(png)).toBe(true);
    expect(renderImage("a different prompt", ratio).equals(png)).toBe(false);
  });

  it("WAV has the requested duration", async () => {
    const wav = renderAudio("song", 7.25);
    expect(await fileTypeFromBuffer(wav)).toEqual({ ext: "wav", mime: "audio/wav" });
    const meta = await parseBuffer(wav, { mimeType: "audio/wav" });
    expect(meta.format.duration).toBeCloseTo(7.25, 3);
    expect(meta.format.sampleRate).toBe(8000);
  });

  it.each([
    [5, "16:9"],
    [8, "9:16"],
    [10, "1:1"],
  ])("MP4 of %ds at %s is recognised as video with that duration", async (secs, ratio) => {
    const mp4 = renderVideo("a river", secs, ratio);
    expect(await fileTypeFromBuffer(mp4)).toEqual({ ext: "mp4", mime: "video/mp4" });
    const meta = await parseBuffer(mp4, { mimeType: "video/mp4" });
    expect(meta.format.hasVideo).toBe(true);
    expect(meta.format.duration).toBeCloseTo(secs, 3);
    const { width, height } = videoSize(ratio);
    expect(width % 2).toBe(0);
    expect(height % 2).toBe(0);
    expect(mp4.length).toBeLessThan(400_000);
  });

  it("an MP4 without an audio track still carries its duration in the movie header", async () => {
    const mp4 = renderVideo("a silent river", 6, "16:9", { audio: false });
    expect(await fileTypeFromBuffer(mp4)).toEqual({ ext: "mp4", mime: "video/mp4" });
    // One track, and it is not sound.
    expect(mp4.indexOf("trak")).toBe(mp4.lastIndexOf("trak"));
    expect(mp4.includes("soun")).toBe(false);
    // music-metadata takes an MP4's duration from its audio track, so it finds none here.
    const meta = await parseBuffer(mp4, { mimeType: "video/mp4" }, { duration: true });
    expect(meta.format.duration).toBeUndefined();
    expect(mp4Duration(mp4)).toBe(6);
    expect(mp4Duration(renderVideo("a river", 9, "1:1"))).toBe(9);
  });
});

/** A movie header box of version 0 or 1, inside a moov, after an ftyp and a 64-bit-sized mdat. */
function isoFile(version: 0 | 1, timescale: number, duration: bigint): Buffer {
  const u32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
  const u64 = (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(n);
    return b;
  };
  const box = (type: string, ...parts: Buffer[]) => {
    const body = Buffer.concat(parts);
    return Buffer.concat([u32(8 + body.length), Buffer.from(type, "latin1"), body]);
  };
  const times = version === 1 ? Buffer.alloc(16) : Buffer.alloc(8);
  const length = version === 1 ? u64(duration) : u32(Number(duration));
  const mvhd = box("mvhd", u32(version << 24), times, u32(timescale), length, Buffer.alloc(80));
  const payload = Buffer.alloc(100);
  const mdat = Buffer.concat([
    u32(1),
    Buffer.from("mdat", "latin1"),
    u64(BigInt(16 + payload.length)),
    payload,
  ]);
  return Buffer.concat([box("ftyp", Buffer.from("isom", "latin1"), u32(0)), mdat, box("moov", mvhd)]);
}

describe("reading an MP4's duration from its movie header (mvhd)", () => {
  it("reads version 0 and version 1 headers, past a box with a 64-bit size", () => {
    expect(mp4Duration(isoFile(0, 600, 4_500n))).toBe(7.5);
    expect(mp4Duration(isoFile(1, 90_000, 90_000n * 100n))).toBe(100);
  });

  it("gives nothing for an unknown duration, a zero timescale, no movie header or truncated bytes", () => {
    expect(mp4Duration(isoFile(0, 600, 0xffffffffn))).toBeUndefined();
    expect(mp4Duration(isoFile(1, 600, 0xffffffffffffffffn))).toBeUndefined();
    expect(mp4Duration(isoFile(0, 0, 10n))).toBeUndefined();
    expect(mp4Duration(renderImage("not a movie", "1:1"))).toBeUndefined();
    const whole = isoFile(0, 600, 4_500n);
    expect(mp4Duration(whole.subarray(0, whole.length - 40))).toBeUndefined();
  });
});

const hasFfmpeg = runnableOrSkipped(
  spawnSync("ffmpeg", ["-version"]).status === 0
    ? undefined
    : "ffmpeg is not installed (apt-get install ffmpeg)",
  "the sandbox's MP4 decoding by ffmpeg (test/sandbox/media.test.ts)",
);

describe.skipIf(!hasFfmpeg)("decoding with ffmpeg", () => {
  it.each(["16:9", "9:16", "1:1"])("an MP4 at %s decodes every frame without errors", async (ratio) => {
    const dir = await mkdtemp(join(tmpdir(), "sbx-mp4-"));
    const file = join(dir, "v.mp4");
    await writeFile(file, renderVideo(`decode ${ratio}`, 3, ratio));
    const decode = spawnSync("ffmpeg", ["-v", "error", "-i", file, "-f", "null", "-"], { encoding: "utf8" });
    expect([decode.status, decode.stderr]).toEqual([0, ""]);
    const probe = spawnSync(
      "ffprobe",
      [
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-count_frames",
        "-show_entries",
        "stream=width,height,nb_read_frames",
        "-of",
        "csv=p=0",
        file,
      ],
      { encoding: "utf8" },
    );
    const { width, height } = videoSize(ratio);
    expect(probe.stdout.trim()).toBe(`${width},${height},12`);
  });
});
