/**
 * MCP roots through what users run: the built CLI over stdio, with a client that declares roots
 * as the MCP Inspector does. An empty roots list keeps GENERATION_FILES in force (as the reference
 * filesystem server does), so every file path of the README's "Trying it" works; roots that name a
 * directory narrow it, and a refusal says which directories are in force. Under a host that gives its
 * project folder as the only root (Claude Code, VS Code), saves go to generated/ in the project.
 */

import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { renderImage } from "../../src/sandbox/media/png.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import { CLI, type ConnectedCli, connectCli, isolatedEnv } from "../helpers/cli.js";

const text = (r: CallToolResult): string =>
  r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
const call = async (cli: ConnectedCli, name: string, args: Record<string, unknown>) =>
  (await cli.client.callTool({ name, arguments: args })) as CallToolResult;

const open: { close(): Promise<void>; cleanup(): void }[] = [];
/** A generation saved as it finishes (save: true). */
const generateSaved = (cli: ConnectedCli) =>
  call(cli, "generate_image", { model: "sandbox-image-fast", prompt: "a fox", save: true, wait: 30 });
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.close();
    o.cleanup();
  }
});

async function start(roots: (dir: string) => string[]) {
  const iso = isolatedEnv();
  const files = path.join(iso.dir, "files");
  await mkdir(path.join(files, "sub"), { recursive: true });
  await writeFile(path.join(files, "pic.png"), renderImage("top", "1:1"));
  await writeFile(path.join(files, "sub", "in.png"), renderImage("in", "1:1"));
  await writeFile(path.join(files, "me.wav"), renderAudio("me", 20));
  const env = { ...iso.env, GENERATION_FILES: files, GENERATION_OUTPUT_DIR: path.join(files, "out") };
  const cli = await connectCli({ args: [CLI, "--sandbox"], env, roots: roots(iso.dir), name: "roots-host" });
  open.push({ close: () => cli.client.close(), cleanup: iso.cleanup });
  return { cli, files };
}

describe("MCP roots (built CLI over stdio)", () => {
  it("an empty roots list keeps GENERATION_FILES: upload by path, upload_voice, save: true and save_outputs work", async () => {
    const { cli, files } = await start(() => []);
    const up = await call(cli, "upload_asset", { path: path.join(files, "pic.png") });
    expect(up.isError, text(up)).toBeFalsy();
    const voice = await call(cli, "upload_voice", { path: "me.wav", rightsConfirmed: true });
    expect(voice.isError, text(voice)).toBeFalsy();
    const gen = await generateSaved(cli);
    expect(gen.isError, text(gen)).toBeFalsy();
    const task = (gen.structuredContent as { task: { id: string; status: string }; saved?: string[] }) ?? {};
    expect(task.task.status).toBe("succeeded");
    expect(task.saved?.length).toBe(1);
    const saved = await call(cli, "save_outputs", { taskId: task.task.id });
    expect(saved.isError, text(saved)).toBeFalsy();
    expect((saved.structuredContent as { saved: string[] }).saved.length).toBe(1);
    expect((await readdir(path.join(files, "out"))).filter((n) => n.endsWith(".png"))).toHaveLength(2);
  }, 60_000);

  it("roots that name a directory narrow GENERATION_FILES, and refusals say which directories are in force", async () => {
    const { cli, files } = await start((dir) => [path.join(dir, "files", "sub")]);
    const sub = path.join(files, "sub");
    const refused = await call(cli, "upload_asset", { path: path.join(files, "pic.png") });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^INVALID_ARGUMENT: path: .*outside the allowed directories \(in force: /);
    expect(text(refused)).toContain(`in force: ${sub})`);
    const inside = await call(cli, "upload_asset", { path: path.join(sub, "in.png") });
    expect(inside.isError, text(inside)).toBeFalsy();
    // The output directory (files/out) lies outside the root: refused before anything is sent.
    const gen = await call(cli, "generate_image", {
      model: "sandbox-image-fast",
      prompt: "a fox",
      save: true,
    });
    expect(gen.isError).toBe(true);
    expect(text(gen)).toMatch(
      /^SAVE_NOT_ALLOWED: .*output directory .*out is outside the allowed directories/,
    );
    expect(text(gen)).toContain(`(in force: ${sub})`);
    expect(text(gen)).toContain(`GENERATION_FILES is ${files}, narrowed by the client's MCP roots`);
    // The first remedy is one that works while the roots narrow (GENERATION_FILES cannot widen them).
    expect(text(gen)).toContain(
      `Next: Leave GENERATION_OUTPUT_DIR unset (saves then go to generated/ under the client's first root, ${path.join(sub, "generated")})`,
    );
    const listed = await call(cli, "list_requests", {});
    expect((listed.structuredContent as { requests: unknown[] }).requests).toEqual([]);
  }, 60_000);

  it("under a project folder as the only root (Claude Code, VS Code), saves go to generated/ in it and say so", async () => {
    // GENERATION_FILES is the home directory, as by default; GENERATION_OUTPUT_DIR is unset.
    const iso = isolatedEnv();
    const project = path.join(iso.dir, "code", "project");
    await mkdir(project, { recursive: true });
    const cli = await connectCli({
      args: [CLI, "--sandbox"],
      env: iso.env,
      roots: [project],
      name: "claude-code",
    });
    open.push({ close: () => cli.client.close(), cleanup: iso.cleanup });
    const gen = await generateSaved(cli);
    expect(gen.isError, text(gen)).toBeFalsy();
    const made = gen.structuredContent as { task: { id: string }; saved?: string[] };
    const into = path.join(project, "generated");
    expect(made.saved).toEqual([path.join(into, `${made.task.id}-0.png`)]);
    expect(text(gen)).toContain(`Saved into ${into}: generated/ under the client's first MCP root`);
    const again = await call(cli, "save_outputs", { taskId: made.task.id });
    expect(again.isError, text(again)).toBeFalsy();
    expect((again.structuredContent as { saved: string[] }).saved).toEqual([
      path.join(into, `${made.task.id}-0-1.png`),
    ]);
    expect((await readdir(into)).sort()).toEqual([`${made.task.id}-0-1.png`, `${made.task.id}-0.png`]);
    // Nothing went to the home directory's generated/, which the roots leave out.
    expect(await readdir(iso.dir)).not.toContain("generated");
  }, 60_000);
});
