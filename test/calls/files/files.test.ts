import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  allowedDirs,
  isInside,
  localScope,
  type MediaType,
  openMedia,
} from "../../../src/calls/files/files.js";
import { safeName, saveInside } from "../../../src/calls/files/save-file.js";
import { renderImage } from "../../../src/sandbox/media/png.js";
import { ArgumentError } from "../../../src/shared/local-refusals.js";
import { type TempDir, tempDir } from "../../helpers/temp.js";

const media = (t: MediaType | undefined) =>
  t && /^(image|video|audio)\//.test(t.mime) ? undefined : "is not media";
const rules = { field: "path", maxBytes: 1_000_000, accept: media };

describe("files", () => {
  let temp: TempDir;
  let root: string;
  let allowed: string;
  let secret: string;
  beforeAll(async () => {
    temp = tempDir("gen-mcp-files-");
    root = temp.dir;
    allowed = path.join(root, "allowed");
    secret = path.join(root, "allowed-not"); // shares a string prefix with `allowed`
    await mkdir(path.join(allowed, "sub"), { recursive: true });
    await mkdir(secret);
    await writeFile(path.join(allowed, "pic.png"), renderImage("x", "1:1"));
    await writeFile(path.join(secret, "pic.png"), renderImage("y", "1:1"));
    await writeFile(path.join(allowed, "notes.png"), "just text, named like an image\n");
    await symlink(path.join(secret, "pic.png"), path.join(allowed, "escape.png"));
    await symlink(secret, path.join(allowed, "escape-dir"));
    await symlink(path.join(allowed, "pic.png"), path.join(allowed, "inside-link.png"));
  });
  afterAll(() => temp.cleanup());

  it("judges containment by path segments, not string prefix", () => {
    expect(isInside("/a/b", "/a/b/c")).toBe(true);
    expect(isInside("/a/b", "/a/b")).toBe(true);
    expect(isInside("/a/b", "/a/bc")).toBe(false);
    expect(isInside("/a/b", "/a/b/../c")).toBe(false);
    expect(isInside("/a/b", "/a/b/..x/c")).toBe(true);
  });

  it("opens a media file inside the allowed directories, typed by its bytes", async () => {
    const f = await openMedia("pic.png", localScope([allowed]), rules);
    try {
      expect(f.type.mime).toBe("image/png");
      expect(f.realPath).toBe(path.join(allowed, "pic.png"));
      expect(f.name).toBe("pic.png");
      // The path handed on reopens the very file that was checked.
      expect(Buffer.compare(await readFile(f.readPath), await readFile(f.realPath))).toBe(0);
    } finally {
      await f.close();
    }
    const viaLink = await openMedia(path.join(allowed, "inside-link.png"), localScope([allowed]), rules);
    expect(viaLink.realPath).toBe(path.join(allowed, "pic.png"));
    await viaLink.close();
  });

  it("refuses files outside, prefix look-alikes, and links that escape", async () => {
    for (const p of [
      path.join(secret, "pic.png"),
      path.join(allowed, "..", "allowed-not", "pic.png"),
      path.join(allowed, "escape.png"),
      path.join(allowed, "escape-dir", "pic.png"),
      "/etc/passwd",
    ]) {
      const err = await openMedia(p, localScope([allowed]), rules).catch((e: unknown) => e);
      expect(err, p).toBeInstanceOf(ArgumentError);
      expect((err as Error).message, p).toMatch(/outside the allowed directories/);
    }
  });

  it("refuses a path outside in one wording whether it exists or not, wherever a link leads", async () => {
    const said = async (p: string) => {
      const err = await openMedia(p, localScope([allowed]), rules).catch((e: unknown) => e);
      expect(err, p).toBeInstanceOf(ArgumentError);
      // The path as given is the only part that differs.
      return (err as Error).message.replace(p, "<path>");
    };
    const pairs: Array<[string, string]> = [
      [path.join(secret, "pic.png"), path.join(secret, "missing.png")],
      [path.join(allowed, "escape-dir", "pic.png"), path.join(allowed, "escape-dir", "missing.png")],
      ["/etc/passwd", "/etc/no-such-file-here"],
      ["~/.bashrc", "~/.no-such-file-here"],
    ];
    for (const [there, missing] of pairs) {
      expect(await said(there), there).toBe(await said(missing));
      expect(await said(there)).not.toMatch(/resolved|does not exist/);
    }
  });

  it("refuses non-media by its bytes, directories, and sizes past the limit", async () => {
    await expect(openMedia("notes.png", localScope([allowed]), rules)).rejects.toThrow(
      /is not media \(judged by its bytes/,
    );
    await expect(openMedia("sub", localScope([allowed]), rules)).rejects.toThrow(/not a regular file/);
    await expect(openMedia("pic.png", localScope([allowed]), { ...rules, maxBytes: 10 })).rejects.toThrow(
      /the limit is 1 byte to 10 bytes/,
    );
    await expect(openMedia("missing.png", localScope([allowed]), rules)).rejects.toThrow(/does not exist/);
  });

  it("narrows the configured directories by the client's roots", async () => {
    const sub = path.join(allowed, "sub");
    expect(await allowedDirs([allowed])).toEqual([allowed]);
    expect(await allowedDirs([allowed], [pathToFileURL(sub).href])).toEqual([sub]);
    expect(await allowedDirs([sub], [pathToFileURL(root).href])).toEqual([sub]);
    expect(await allowedDirs([allowed], [pathToFileURL(secret).href])).toEqual([]);
    // No valid root (an empty list, only missing directories, no file: URI) keeps the configured ones.
    expect(await allowedDirs([allowed], [])).toEqual([allowed]);
    expect(await allowedDirs([allowed], [pathToFileURL(path.join(root, "missing")).href])).toEqual([allowed]);
    expect(await allowedDirs([allowed], ["https://example.com/x"])).toEqual([allowed]);
    // One valid root among invalid ones narrows.
    expect(await allowedDirs([allowed], ["https://example.com/x", pathToFileURL(sub).href])).toEqual([sub]);
  });

  it("saves under safe names, never overwriting and never through a link", async () => {
    expect(safeName("../../etc/passwd")).toBe("_.._etc_passwd");
    expect(safeName("task 1/0.png")).toBe("task_1_0.png");
    const out = path.join(allowed, "generated");
    const first = await saveInside(out, "t-0.png", Uint8Array.of(1, 2, 3), localScope([allowed]));
    const second = await saveInside(out, "t-0.png", Uint8Array.of(4), localScope([allowed]));
    expect(first).toBe(path.join(out, "t-0.png"));
    expect(second).toBe(path.join(out, "t-0-1.png"));
    expect([...(await readFile(first))]).toEqual([1, 2, 3]);
    // A link planted at the target name is left alone; the bytes go beside it.
    await symlink(path.join(secret, "planted"), path.join(out, "t-1.png"));
    const third = await saveInside(out, "t-1.png", Uint8Array.of(9), localScope([allowed]));
    expect(third).toBe(path.join(out, "t-1-1.png"));
    expect(await readdir(secret)).not.toContain("planted");
    await expect(
      saveInside(path.join(secret, "out"), "a.png", Uint8Array.of(1), localScope([allowed])),
    ).rejects.toThrow(/outside the allowed directories/);
    await expect(
      saveInside(path.join(allowed, "escape-dir"), "a.png", Uint8Array.of(1), localScope([allowed])),
    ).rejects.toThrow(/outside the allowed directories/);
    expect((await readdir(out)).filter((n) => n.endsWith(".part"))).toEqual([]);
  });
});
