/**
 * What a stranger tries against a server's own disk, and how a test tells whether the server
 * touched it: media planted in the server's home (a photo, a "private key" that is a PNG, so that
 * reading it would upload it, a recording), with their access times set days back, so a read
 * moves them (Linux `relatime`); and the tree of a directory, to see that nothing was written.
 */
import { mkdir, readdir, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { renderImage } from "../../src/sandbox/media/png.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";

export interface Planted {
  /** Files that exist in the server's home. */
  files: string[];
  /** Paths a remote user might try, existing and missing, absolute, `~` and relative. */
  imageProbes: string[];
  voiceProbes: string[];
}

const DAYS_AGO = new Date(Date.now() - 3 * 24 * 3600 * 1000);

export async function plantServerFiles(home: string): Promise<Planted> {
  const photo = path.join(home, "Pictures", "photo.png");
  const key = path.join(home, ".ssh", "id_ed25519");
  const voice = path.join(home, "Music", "me.wav");
  await mkdir(path.dirname(photo), { recursive: true });
  await mkdir(path.dirname(key), { recursive: true });
  await mkdir(path.dirname(voice), { recursive: true });
  await writeFile(photo, renderImage("the server's own photo", "1:1"));
  await writeFile(key, renderImage("the server's secret", "1:1"));
  await writeFile(voice, renderAudio("the server's voice", 20));
  const files = [photo, key, voice];
  for (const f of files) await utimes(f, DAYS_AGO, DAYS_AGO);
  return {
    files,
    imageProbes: [
      photo,
      path.join(home, "Pictures", "missing.png"),
      key,
      path.join(home, ".ssh", "id_rsa"),
      "~/Pictures/photo.png",
      "~/Pictures/missing.png",
      "Pictures/photo.png",
      "../../etc/passwd",
      "/etc/passwd",
    ],
    voiceProbes: [voice, path.join(home, "Music", "missing.wav"), "~/Music/me.wav", "Music/missing.wav"],
  };
}

/** Access times in ms: a read since planting moves them. */
export async function accessTimes(files: string[]): Promise<number[]> {
  return Promise.all(files.map(async (f) => (await stat(f)).atimeMs));
}

/** Every entry under `dir`, relative, following no link. */
export async function treeOf(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    out.push(entry.name);
    if (entry.isDirectory()) {
      for (const inner of await treeOf(path.join(dir, entry.name))) out.push(path.join(entry.name, inner));
    }
  }
  return out.sort();
}

export const textOf = (r: CallToolResult): string =>
  r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** A result as a client compares it: everything but nothing that varies by design. */
export const answerOf = (r: CallToolResult) => ({
  isError: r.isError,
  content: r.content,
  structuredContent: r.structuredContent,
  meta: r._meta,
});
