/**
 * The grammar of what the shipped binary says, over texts it builds from values: tool and prompt
 * descriptions, list_models, the storyboard and voice-over prompts (one shot, one keyframe), task
 * results and progress for a task that succeeds and one that fails, a price refusal, an upload past
 * the size limit, limits the input schema holds and list_requests. No "is succeeded", no "a
 * image", no "1 Gems", no size in raw bytes nor a limit in raw digits; and the storyboard offers keyframes only from models that take a prompt alone.
 */
import { closeSync, ftruncateSync, openSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SANDBOX_MARKERS } from "../../src/sandbox/tasks.js";
import { connectSandboxedCli, type SandboxedCli } from "../helpers/sandboxed-cli.js";

type Result = { isError?: boolean; content?: unknown };
const textOf = (r: Result): string =>
  ((r.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");

let cli: SandboxedCli;
beforeAll(async () => {
  cli = await connectSandboxedCli("wording");
}, 30_000);
afterAll(() => cli?.close());

/** Mistakes of grammar a text built from values falls into, each with what it caught. */
const MISTAKES: Array<[string, RegExp]> = [
  ["a finished status after 'is'", /\b(is|are) (succeeded|failed|cancelled|partial)\b/],
  ["'a' before a vowel", /\ba (?!one\b|u)[aeiou][\w-]*/i],
  [
    "a plural after 1",
    /(?<![\d.,])\b1 (Gems|keyframes|requests|submissions|voices|models|shots|parts|tasks|outputs|seconds)\b/,
  ],
  ["a size in raw bytes", /\b\d{7,} bytes\b|limit is \d{7,}/],
  ["a limit in raw digits", /<=\s?\d{5,}|\b\d{5,} (characters|items)\b|at most \d{5,}\b/],
];

function mistakes(label: string, text: string): string[] {
  return MISTAKES.flatMap(([what, re]) => {
    const m = re.exec(text);
    return m ? [`${label}: ${what}: "…${text.slice(Math.max(0, m.index - 40), m.index + 40)}…"`] : [];
  });
}

const texts: Array<[string, string]> = [];
const progress: string[] = [];
async function call(name: string, args: Record<string, unknown>): Promise<string> {
  const r = (await cli.client.callTool(
    { name, arguments: args },
    { onprogress: (p) => void progress.push(p.message ?? "") },
  )) as Result;
  const text = textOf(r);
  texts.push([`${name} ${JSON.stringify(args).slice(0, 60)}`, text]);
  return text;
}
async function prompt(name: string, args: Record<string, string>): Promise<string> {
  const p = await cli.client.getPrompt({ name, arguments: args });
  const text = p.messages.map((m) => (m.content.type === "text" ? m.content.text : "")).join("\n");
  texts.push([`prompt ${name} ${JSON.stringify(args)}`, text]);
  return text;
}

it("the texts the server builds from values read as English", async () => {
  const { tools } = await cli.client.listTools();
  for (const t of tools) texts.push([`tool ${t.name}`, JSON.stringify(t)]);
  const { prompts } = await cli.client.listPrompts();
  for (const p of prompts) texts.push([`prompt ${p.name}`, JSON.stringify(p)]);

  const models = await call("list_models", {});
  // The retired image model's hint is 1 Gem.
  expect(models).toContain(
    "sandbox-image-legacy (Sandbox Image Legacy (retired); image, unavailable, about 1 Gem each)",
  );
  expect(models).toContain("Video analysis: extract_video uses service-video-extract (");
  expect(await call("list_models", { kind: "video" })).toContain("extract_video uses service-video-extract");
  expect(await call("list_models", { kind: "image" })).not.toContain("extract_video");

  const board = await prompt("storyboard", { scene: "A fox crosses a frozen river.", shots: "1" });
  expect(board).toContain("For 1 keyframe, by the catalog's baseGems: sandbox-image-fast about 2 Gems");
  expect(board).toContain("- Clips: 1 video submission;");
  expect(board).toContain("choose an image model that takes a prompt alone");
  // The edit model needs a source image: never offered for keyframes, and refused when named.
  expect(board).not.toContain("sandbox-image-edit");
  const named = await prompt("storyboard", { scene: "A fox.", shots: "2", imageModel: "sandbox-image-edit" });
  expect(named).toContain("sandbox-image-edit needs a source image");
  const completion = await cli.client.complete({
    ref: { type: "ref/prompt", name: "storyboard" },
    argument: { name: "imageModel", value: "sandbox-image" },
  });
  expect(completion.completion.values).toContain("sandbox-image-fast");
  expect(completion.completion.values).not.toContain("sandbox-image-edit");
  await prompt("storyboard", { scene: "A fox.", shots: "1", imageModel: "sandbox-image-fast" });
  await prompt("voice_over", { script: "Hello." });
  await prompt("recover_lost_work", {});

  const done = await call("generate_image", { model: "sandbox-image-fast", prompt: "a lantern", wait: 60 });
  expect(done).toMatch(/Task \S+ has succeeded/);
  const failed = await call("generate_image", {
    model: "sandbox-image-fast",
    prompt: `a kite ${SANDBOX_MARKERS.fail}`,
    wait: 60,
  });
  expect(failed).toMatch(/Task \S+ has failed/);
  await call("generate_image", { model: "sandbox-image-pro", prompt: "a lighthouse", maxGems: 1, wait: 0 });
  await call("list_requests", {});

  // An upload past the limit (a sparse file: nothing is written, nothing read).
  const big = join(cli.dir, "big.png");
  const fd = openSync(big, "w");
  ftruncateSync(fd, 30 * 1024 * 1024 + 1);
  closeSync(fd);
  const upload = await call("upload_asset", { path: big });
  expect(upload).toContain("the limit is 1 byte to 30 MiB");
  // Limits the input schema holds, as people read them: 30 MiB of bytes, 30,000 characters.
  const data = await call("upload_asset", { data: "A".repeat(40 * 1024 * 1024 + 4), mimeType: "image/png" });
  expect(data).toMatch(/^INVALID_ARGUMENT: data: must decode to at most 30 MiB \(base64 of 40 MiB\)/);
  const long = await call("generate_image", { model: "sandbox-image-fast", prompt: "x".repeat(30_001) });
  expect(long).toMatch(/^INVALID_ARGUMENT: prompt: must be at most 30,000 characters/);

  texts.push(...progress.map((p, i): [string, string] => [`progress ${i}`, p]));
  expect(progress.length).toBeGreaterThan(0);
  expect(texts.flatMap(([label, text]) => mistakes(label, text))).toEqual([]);
}, 150_000);

it("the grammar check catches each mistake it names", () => {
  expect(mistakes("t", "Task t1 is succeeded.")).toHaveLength(1);
  expect(mistakes("t", "choose a image model")).toHaveLength(1);
  expect(mistakes("t", "about 1 Gems each")).toHaveLength(1);
  expect(mistakes("t", "the limit is 31457280 bytes")).toHaveLength(1);
  expect(mistakes("t", "Too big: expected string to have <=41943040 characters")).toHaveLength(1);
  expect(mistakes("t", "must be at most 30000 characters")).toHaveLength(1);
  expect(mistakes("t", "Task t1 has succeeded; an image model; about 1 Gem; 11 Gems; 30 MiB")).toEqual([]);
});
