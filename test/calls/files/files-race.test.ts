/**
 * The path check raced: while a directory on the way is swapped for a link to an outside
 * directory and back, every open either refuses (INVALID_ARGUMENT naming the argument) or
 * yields the inside file; outside bytes are never read; a save never makes anything outside, not
 * even for an instant (the outside directory is watched), and no save reported is lost.
 */
import { execFileSync } from "node:child_process";
import { watch } from "node:fs";
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isInside, localScope, type MediaType, openMedia } from "../../../src/calls/files/files.js";
import { saveInside } from "../../../src/calls/files/save-file.js";
import { renderImage } from "../../../src/sandbox/media/png.js";
import { ArgumentError } from "../../../src/shared/local-refusals.js";
import { swapDirectory } from "../../helpers/swapper.js";
import { type TempDir, tempDir } from "../../helpers/temp.js";

const media = (t: MediaType | undefined) =>
  t && /^(image|video|audio)\//.test(t.mime) ? undefined : "is not media";
const rules = { field: "path", maxBytes: 1_000_000, accept: media };
const ATTEMPTS = 20_000;
const MAX_MS = 3_000;

/** Every regular file under `dir`, following no link. */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(at)));
    else if (entry.isFile()) out.push(at);
  }
  return out;
}

describe("files under a racing swap", () => {
  let temp: TempDir;
  let allowed: string;
  let outside: string;
  let inside: Buffer;
  let secret: Buffer;
  beforeEach(async () => {
    temp = tempDir("gen-mcp-race-");
    allowed = path.join(temp.dir, "allowed");
    outside = path.join(temp.dir, "outside");
    await mkdir(path.join(allowed, "d"), { recursive: true });
    await mkdir(outside);
    inside = renderImage("inside", "1:1");
    secret = renderImage("secret", "16:9");
    await writeFile(path.join(allowed, "d", "pic.png"), inside);
    await writeFile(path.join(outside, "pic.png"), secret);
  });
  afterEach(() => temp.cleanup());

  it("reads only the inside file, or refuses naming the argument, while a directory becomes a link", async () => {
    const swapper = swapDirectory(path.join(allowed, "d"), outside, MAX_MS);
    const seen = { inside: 0, outside: 0, refused: 0 };
    const faults: string[] = [];
    const started = Date.now();
    try {
      for (let i = 0; i < ATTEMPTS && Date.now() - started < MAX_MS; i++) {
        let file: Awaited<ReturnType<typeof openMedia>>;
        try {
          file = await openMedia("d/pic.png", localScope([allowed]), rules);
        } catch (err) {
          // Vanished, changed or outside: always the caller's argument, never an internal fault.
          if (err instanceof ArgumentError && err.message.startsWith("path: ")) seen.refused++;
          else faults.push(String(err));
          continue;
        }
        try {
          const bytes = await readFile(file.readPath);
          if (bytes.equals(secret)) seen.outside++;
          else if (bytes.equals(inside)) seen.inside++;
          // Where the kernel says the opened file is: inside (the parked name counts).
          expect(file.realPath.startsWith(`${allowed}${path.sep}`)).toBe(true);
        } finally {
          await file.close();
        }
      }
    } finally {
      const swaps = await swapper.stop();
      expect(swaps).toBeGreaterThan(0);
    }
    expect(seen.outside, JSON.stringify(seen)).toBe(0);
    expect(faults).toEqual([]);
    expect(seen.inside).toBeGreaterThan(0);
  }, 30_000);

  it("never makes anything outside, nor loses a save, while a directory on the way becomes a link", async () => {
    // Every entry made in the outside directory, even one removed at once, is an event here.
    const events: string[] = [];
    const watcher = watch(outside, (type, name) => events.push(`${type} ${String(name)}`));
    const swapper = swapDirectory(path.join(allowed, "d"), outside, MAX_MS);
    const targets = [path.join(allowed, "d"), path.join(allowed, "d", "sub", "deeper")];
    let saved = 0;
    const faults: string[] = [];
    const started = Date.now();
    // Several saves at once, into the swapped directory and into new directories under it.
    const saver = async (k: number) => {
      for (let i = k; Date.now() - started < MAX_MS; i++) {
        try {
          const at = await saveInside(targets[i % 2] as string, "out.png", inside, localScope([allowed]));
          expect(isInside(allowed, at)).toBe(true);
          saved++;
        } catch (err) {
          if (!(err instanceof ArgumentError && err.message.startsWith("save: "))) faults.push(String(err));
        }
      }
    };
    let swaps = 0;
    try {
      await Promise.all([0, 1, 2, 3].map(saver));
    } finally {
      swaps = await swapper.stop();
      await new Promise((resolve) => setTimeout(resolve, 200)); // let the last events arrive
      watcher.close();
    }
    expect(faults).toEqual([]);
    expect(swaps, "the directory was swapped many times").toBeGreaterThan(1000);
    expect(events, "nothing was ever made in the outside directory").toEqual([]);
    expect(await readdir(outside)).toEqual(["pic.png"]);
    // Every save reported is a whole file inside (moved aside with its directory at most), no
    // temporary file is left, and no save is lost.
    const files = await filesUnder(allowed);
    expect(files.filter((f) => f.endsWith(".part"))).toEqual([]);
    const outs = files.filter((f) => /^out(-\d+)?\.png$/.test(path.basename(f)));
    expect(outs.length).toBe(saved);
    for (const f of outs) expect((await readFile(f)).equals(inside), f).toBe(true);
    expect(saved).toBeGreaterThan(0);
  }, 30_000);

  it("refuses a file that vanished or was swapped for a link, as INVALID_ARGUMENT naming path", async () => {
    await symlink(path.join(outside, "pic.png"), path.join(allowed, "later.png"));
    const gone = await openMedia("gone.png", localScope([allowed]), rules).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(ArgumentError);
    expect((gone as Error).message).toMatch(/^path: gone\.png does not exist/);
    const linked = await openMedia("later.png", localScope([allowed]), rules).catch((e: unknown) => e);
    expect(linked).toBeInstanceOf(ArgumentError);
  });

  it("refuses a FIFO planted under the name without waiting for a writer", async () => {
    execFileSync("mkfifo", [path.join(allowed, "pipe.png")]);
    const err = await openMedia("pipe.png", localScope([allowed]), rules).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ArgumentError);
    expect((err as Error).message).toMatch(/^path: pipe\.png is not a regular file/);
  });

  it("refuses to save through an output directory planted as a link to the outside", async () => {
    await symlink(outside, path.join(allowed, "planted"));
    const err = await saveInside(path.join(allowed, "planted"), "a.png", inside, localScope([allowed])).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ArgumentError);
    expect((err as Error).message).toMatch(/^save: .*outside the allowed directories/);
    // Not even an empty directory is made through the link.
    const deeper = saveInside(path.join(allowed, "planted", "sub"), "a.png", inside, localScope([allowed]));
    await expect(deeper).rejects.toThrow(/^save: .*outside the allowed directories/);
    expect(await readdir(outside)).toEqual(["pic.png"]);
  });
});
