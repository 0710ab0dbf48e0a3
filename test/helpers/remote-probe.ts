/**
 * What a stranger tries against a server's own disk, and how a test tells whether the server
 * touched it: media planted in the server's home (a photo, a "private key" that is a PNG, so that
 * reading it would upload it, a recording), with their access times set days back, so a read
 * moves them (Linux `relatime`); and the tree of a directory, to see that nothing was written.
 */
import { mkdir, readdir, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { expect } from "vitest";
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

export type Caller = (name: string, args: Record<string, unknown>) => Promise<CallToolResult>;

const firstText = (a: ReturnType<typeof answerOf> | undefined): string =>
  a?.content.map((c) => (c.type === "text" ? c.text : "")).join("") ?? "";

/**
 * Every probe through upload_asset and upload_voice of a remote user on a server without
 * GENERATION_FILES: one and the same refusal per tool, naming no server path, with no file read.
 */
export async function expectPathsRefusedAlike(call: Caller, planted: Planted, home: string): Promise<void> {
  const before = await accessTimes(planted.files);
  const images = [];
  for (const p of planted.imageProbes) images.push(answerOf(await call("upload_asset", { path: p })));
  const voices = [];
  for (const p of planted.voiceProbes) {
    voices.push(answerOf(await call("upload_voice", { path: p, rightsConfirmed: true })));
  }
  for (const a of images) expect(a).toEqual(images[0]);
  for (const a of voices) expect(a).toEqual(voices[0]);
  const image = firstText(images[0]);
  const voice = firstText(voices[0]);
  expect(images[0]?.isError).toBe(true);
  expect(image).toMatch(/^INVALID_ARGUMENT: path: this server reads none of its own files for remote users/);
  expect(image).toMatch(/base64 `data`.*media viewer's upload/);
  expect(voice).toMatch(/^INVALID_ARGUMENT: path: .*media viewer's upload/);
  for (const text of [image, voice]) expect(text).not.toContain(home);
  expect(await accessTimes(planted.files)).toEqual(before);
}

/**
 * A remote user's saves on a server without GENERATION_FILES: save: true refused before anything
 * is claimed or spent, save_outputs refused with the outputs' signed URLs, nothing written in the
 * server's home but its ledger.
 */
export async function expectSavesRefused(call: Caller, home: string): Promise<void> {
  const records = async () =>
    ((await call("list_requests", {})).structuredContent as { requests: unknown[] }).requests.length;
  const before = (await treeOf(home)).filter((e) => !e.startsWith("ledger.sqlite"));
  const recorded = await records();
  const asked = await call("generate_image", { model: "sandbox-image-fast", prompt: "a fox", save: true });
  expect(textOf(asked)).toMatch(/^SAVE_NOT_ALLOWED: Outputs are not saved on this server for remote users/);
  expect(await records()).toBe(recorded);
  const made = await call("generate_image", { model: "sandbox-image-fast", prompt: "a fox", wait: 30 });
  expect(made.isError, textOf(made)).toBeFalsy();
  // Its next step is a download, not a save that this server refuses.
  expect(textOf(made)).not.toMatch(/Next: .*save_outputs/);
  const taskId = (made.structuredContent as { task: { id: string } }).task.id;
  const saved = await call("save_outputs", { taskId });
  expect(saved.isError).toBe(true);
  const text = textOf(saved);
  expect(text).toMatch(/^SAVE_NOT_ALLOWED: .*signed URLs.*Download in the media viewer/s);
  expect(text).toMatch(
    new RegExp(`Task ${taskId} has succeeded: its outputs were generated .* remain downloadable`),
  );
  expect(text).toMatch(/#0 https?:\/\/\S+/);
  expect(text).not.toContain(home);
  expect((await treeOf(home)).filter((e) => !e.startsWith("ledger.sqlite"))).toEqual(before);
}
