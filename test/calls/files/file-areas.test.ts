/**
 * Which files a caller may use (src/calls/files/file-areas.ts) and where saves go (saveTarget): remote
 * users' paths judged by their letters, their folders per key, GENERATION_OUTPUT_DIR's place mapped
 * into each folder; a local caller's default output directory following the client's roots.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { areaName, fileScope } from "../../../src/calls/files/file-areas.js";
import { openMedia } from "../../../src/calls/files/files.js";
import { saveTarget } from "../../../src/calls/paid/saving.js";
import type { EngineConfig } from "../../../src/config/config-types.js";
import type { Engine } from "../../../src/mcp/context.js";
import { renderImage } from "../../../src/sandbox/media/png.js";
import { ArgumentError } from "../../../src/shared/local-refusals.js";
import { type TempDir, tempDir } from "../../helpers/temp.js";

const ALICE = "a".repeat(64);
const BOB = "b".repeat(64);
const rules = { field: "path", maxBytes: 1_000_000, accept: () => undefined };

/** An Engine as far as files go: its configuration and its key's hash. */
const engineOf = (config: Partial<EngineConfig>, keyHash = ALICE): Engine =>
  ({
    config: { remoteUsers: true, files: [], extractionModel: "x", defaultWaitSeconds: 0, ...config },
    keyHash,
  }) as Engine;

describe("file areas", () => {
  let temp: TempDir;
  let media: string;
  beforeAll(async () => {
    temp = tempDir("gen-mcp-areas-");
    media = path.join(temp.dir, "media");
    await mkdir(path.join(media, areaName(ALICE)), { recursive: true });
    await writeFile(path.join(media, areaName(ALICE), "mine.png"), renderImage("alice", "1:1"));
  });
  afterAll(() => temp.cleanup());

  it("refuses a remote user's paths by their letters, before the disk: absolute, ~ and climbing out", async () => {
    const scope = await fileScope(engineOf({ files: [media] }, BOB), undefined, "asset");
    for (const p of ["/etc/passwd", "~/x.png", "../x.png", `../${areaName(ALICE)}/mine.png`, "a/../../x"]) {
      const err = await scope.locate(p, "path").catch((e: unknown) => e);
      expect(err, p).toBeInstanceOf(ArgumentError);
      expect((err as Error).message, p).toMatch(/is not a path inside your own folder on this server/);
    }
    // Inside Bob's own folder, Alice's file is simply not there.
    await expect(openMedia("mine.png", scope, rules)).rejects.toThrow(/^path: mine\.png does not exist$/);
    const alice = await fileScope(engineOf({ files: [media] }), undefined, "asset");
    const file = await openMedia("mine.png", alice, rules);
    expect(alice.show(file.realPath)).toBe("mine.png");
    await file.close();
  });

  it("puts a remote user's saves where GENERATION_OUTPUT_DIR sits, inside their own folder", async () => {
    const bob = engineOf({ files: [media], outputDir: path.join(media, "out", "images") }, BOB);
    const target = await saveTarget(bob, undefined);
    expect(target.outputDir).toBe(path.join(media, areaName(BOB), "out", "images"));
    expect(target.scope.show(target.outputDir)).toBe(path.join("out", "images"));
    const unset = await saveTarget(engineOf({ files: [media] }, BOB), undefined);
    expect(unset.outputDir).toBe(path.join(media, areaName(BOB), "generated"));
    // The operator's output directory outside GENERATION_FILES is refused, naming no path.
    const astray = engineOf({ files: [media], outputDir: path.join(temp.dir, "elsewhere") }, BOB);
    const err = await saveTarget(astray, undefined).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/output directory lies outside its directories for users' files/);
    expect((err as Error).message).not.toContain(temp.dir);
  });

  it("gives a remote user without GENERATION_FILES (or none that exists) the same refusal", async () => {
    for (const files of [[], [path.join(temp.dir, "missing")]]) {
      const err = await saveTarget(engineOf({ files }), undefined).catch((e: unknown) => e);
      expect((err as Error).message, files.join()).toMatch(
        /^Outputs are not saved on this server for remote users/,
      );
    }
  });

  it("moves a local caller's default output directory under the first root when the roots leave it out", async () => {
    const project = path.join(temp.dir, "home", "project");
    await mkdir(project, { recursive: true });
    const local = engineOf({ remoteUsers: false, files: [path.join(temp.dir, "home")] });
    const plain = await saveTarget(local, undefined);
    expect(plain.outputDir).toBe(path.join(temp.dir, "home", "generated"));
    expect(plain.where).toBeUndefined();
    const rooted = await saveTarget(local, [pathToFileURL(project).href]);
    expect(rooted.outputDir).toBe(path.join(project, "generated"));
    expect(rooted.where).toMatch(/generated\/ under the client's first MCP root/);
    // Set explicitly outside the root: refused, the first remedy being one that works.
    const fixed = engineOf({ remoteUsers: false, files: [temp.dir], outputDir: path.join(temp.dir, "out") });
    const err = (await saveTarget(fixed, [pathToFileURL(project).href]).catch((e: unknown) => e)) as {
      action: string;
    };
    expect(err.action).toMatch(/^Leave GENERATION_OUTPUT_DIR unset/);
  });
});
