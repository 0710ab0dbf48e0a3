/**
 * 16-bit mono PCM WAV at a low sample rate (8 kHz keeps a 4-minute song under 4 MB).
 * The tone sequence comes from the seed, so the same request gives the same sound.
 */
import { endianness } from "node:os";
import { seedBytes } from "./raster.js";

export const WAV_SAMPLE_RATE = 8_000;

export function encodeWav(samples: Int16Array, sampleRate = WAV_SAMPLE_RATE): Buffer {
  const dataBytes = samples.length * 2;
  const out = Buffer.alloc(44 + dataBytes);
  out.write("RIFF", 0, "latin1");
  out.writeUInt32LE(36 + dataBytes, 4);
  out.write("WAVE", 8, "latin1");
  out.write("fmt ", 12, "latin1");
  out.writeUInt32LE(16, 16); // fmt chunk size
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(1, 22); // mono
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * 2, 28); // byte rate
  out.writeUInt16LE(2, 32); // block align
  out.writeUInt16LE(16, 34); // bits per sample
  out.write("data", 36, "latin1");
  out.writeUInt32LE(dataBytes, 40);
  if (endianness() === "LE") out.set(new Uint8Array(samples.buffer, samples.byteOffset, dataBytes), 44);
  else for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i] as number, 44 + i * 2);
  return out;
}

/** A melody of seed-chosen notes, a quarter second each, with a soft envelope per note. */
export function toneSamples(seed: string, seconds: number, sampleRate = WAV_SAMPLE_RATE): Int16Array {
  const h = seedBytes(seed);
  const total = Math.max(1, Math.round(seconds * sampleRate));
  const noteLen = Math.round(sampleRate / 4);
  const out = new Int16Array(total);
  // A phase accumulator keeps sine arguments small (large ones take a slow path).
  let phase = 0;
  for (let start = 0, note = 0; start < total; start += noteLen, note++) {
    const semis = (h[note % h.length] as number) % 24;
    const step = (2 * Math.PI * 220 * 2 ** (semis / 12)) / sampleRate;
    const end = Math.min(total, start + noteLen);
    for (let i = start; i < end; i++) {
      const env = Math.sin((Math.PI * (i - start)) / noteLen);
      out[i] = Math.round(Math.sin(phase) * env * 8_000);
      phase += step;
      if (phase > 2 * Math.PI) phase -= 2 * Math.PI;
    }
  }
  return out;
}

export function renderAudio(seed: string, seconds: number): Buffer {
  return encodeWav(toneSamples(seed, seconds));
}
