import { mkdir, rename, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { renderImage } from "../../src/sandbox/media/png.js";
import { renderAudio } from "../../src/sandbox/media/wav.js";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, type HarnessOptions, harness, structured, textOf } from "./harness.js";

const ASSETS = "POST /api/generate/assets";
const VOICES = "POST /api/generate/voices";

let h: Harness;
const open = async (o?: HarnessOptions) => {
  h = await harness(o);
  return h;
};
fakeTimeEach();
afterEach(() => h?.close());
const files = () => path.join(h.dir, "files");

describe("upload_asset", () => {
  it("uploads a file from the allowed directories and base64 data", async () => {
    await open();
    await writeFile(path.join(files(), "fox.png"), renderImage("fox", "1:1"));
    const fromPath = structured<{ asset: { id: string; kind: string } }>(
      await h.call("upload_asset", { path: "fox.png" }),
    );
    expect(fromPath.asset.kind).toBe("image");
    const data = renderImage("cat", "16:9").toString("base64");
    const r = await h.call("upload_asset", { data, mimeType: "image/png", filename: "cat.png" });
    const fromData = structured<{ asset: { id: string } }>(r);
    expect(textOf(r)).toContain(fromData.asset.id);
    expect(h.sandbox.stats.requests(ASSETS)).toBe(2);
  });

  it("refuses files outside, escaping links, non-media bytes and ambiguous arguments before sending", async () => {
    await open();
    await writeFile(path.join(h.dir, "outside.png"), renderImage("x", "1:1"));
    await symlink(path.join(h.dir, "outside.png"), path.join(files(), "link.png"));
    await writeFile(path.join(files(), "fake.png"), "<html>not an image</html>");
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { path: path.join(h.dir, "outside.png") },
        /^INVALID_ARGUMENT: path: .*outside the allowed directories/,
      ],
      [{ path: "link.png" }, /^INVALID_ARGUMENT: path: .*outside the allowed directories/],
      [{ path: "../outside.png" }, /^INVALID_ARGUMENT: path: .*outside/],
      [{ path: "fake.png" }, /^INVALID_ARGUMENT: path: .*not a recognizable media file.*bytes/],
      [
        { data: Buffer.from("plain text").toString("base64"), mimeType: "image/png" },
        /^INVALID_ARGUMENT: data: /,
      ],
      [
        { data: renderImage("a", "1:1").toString("base64"), mimeType: "audio/wav" },
        /^INVALID_ARGUMENT: mimeType: says audio\/wav but the bytes are image\/png/,
      ],
      [{ data: "@@@@", mimeType: "image/png" }, /^INVALID_ARGUMENT: data: is not valid base64/],
      [{}, /^INVALID_ARGUMENT: path, data: give exactly one/],
      [{ path: "a.png", data: "AAAA", mimeType: "image/png" }, /^INVALID_ARGUMENT: path, data/],
      [{ data: "AAAA", mimeType: "text/plain" }, /^INVALID_ARGUMENT: mimeType: /],
    ];
    for (const [args, pattern] of cases) {
      const r = await h.call("upload_asset", args);
      expect(r.isError, JSON.stringify(args).slice(0, 60)).toBe(true);
      expect(textOf(r)).toMatch(pattern);
    }
    expect(h.sandbox.stats.requests()).toBe(0);
  });

  it("narrows the allowed directories to the client's roots", async () => {
    await open({ roots: (dir) => [path.join(dir, "files", "sub")] });
    await mkdir(path.join(files(), "sub"));
    await writeFile(path.join(files(), "top.png"), renderImage("top", "1:1"));
    await writeFile(path.join(files(), "sub", "in.png"), renderImage("in", "1:1"));
    const refused = await h.call("upload_asset", { path: path.join(files(), "top.png") });
    expect(textOf(refused)).toMatch(/^INVALID_ARGUMENT: path: .*outside the allowed directories/);
    // Relative paths start at the first allowed directory, here the root.
    structured(await h.call("upload_asset", { path: "in.png" }));
    expect(h.sandbox.stats.requests(ASSETS)).toBe(1);
  });
});

describe("upload_voice", () => {
  it("list_voices with no private voices points to scope explore and to upload_voice", async () => {
    await open();
    const r = await h.call("list_voices", {});
    expect(structured<{ voices: unknown[] }>(r).voices).toEqual([]);
    expect(textOf(r)).toMatch(/no private voices yet\. Call list_voices with scope explore/);
    expect(textOf(r)).toContain("upload_voice");
  });

  it("without elicitation, requires rightsConfirmed: true and reads the duration from the audio", async () => {
    await open();
    await writeFile(path.join(files(), "me.wav"), renderAudio("me", 20));
    const refused = await h.call("upload_voice", { path: "me.wav" });
    expect(textOf(refused)).toMatch(/^INVALID_ARGUMENT: rightsConfirmed: must be true/);
    expect(h.sandbox.stats.requests(VOICES)).toBe(0);
    const r = await h.call("upload_voice", { path: "me.wav", rightsConfirmed: true });
    const { voice } = structured<{ voice: { id: string; name: string } }>(r);
    expect(textOf(r)).toContain(voice.id);
    expect(voice.name).toMatch(/^me\b/);
    const mine = structured<{ voices: { id: string }[] }>(await h.call("list_voices", {}));
    expect(mine.voices.map((v) => v.id)).toContain(voice.id);
    const cloned = await h.call("generate_audio", {
      model: "service-voice",
      operation: "voice_clone",
      prompt: "Hello in my own voice",
      parameters: { voiceProfileId: voice.id },
      wait: 20,
    });
    expect(structured<{ task: { status: string } }>(cloned).task.status).toBe("succeeded");
  });

  it("sends the recording it checked even when its directory becomes a link before the upload", async () => {
    await open();
    const d = path.join(files(), "d");
    const away = path.join(h.dir, "away");
    await mkdir(d);
    await mkdir(away);
    await writeFile(path.join(d, "me.wav"), renderAudio("me", 20));
    await writeFile(path.join(away, "me.wav"), renderImage("not a voice", "1:1"));
    // Swap the directory after every check, as the upload starts: a path walked again now
    // leads to the outside file (not audio, so the service layer would refuse it).
    const client = h.engine.client;
    const upload = client.uploadVoice.bind(client);
    client.uploadVoice = async (v, o) => {
      await rename(d, `${d}.parked`);
      await symlink(away, d);
      return upload(v, o);
    };
    const r = await h.call("upload_voice", { path: "d/me.wav", rightsConfirmed: true });
    expect(textOf(r)).toMatch(/^Uploaded voice /);
    expect(structured<{ voice: { name: string } }>(r).voice.name).toMatch(/^me\b/);
    expect(h.sandbox.stats.requests(VOICES)).toBe(1);
  });

  it("asks the user when the client can ask; a refusal sends nothing", async () => {
    let answer: "accept" | "decline" = "decline";
    await open({
      elicit: () =>
        answer === "accept" ? { action: "accept", content: { confirm: true } } : { action: "decline" },
    });
    await writeFile(path.join(files(), "me.wav"), renderAudio("me", 20));
    const declined = await h.call("upload_voice", { path: "me.wav", rightsConfirmed: true });
    expect(textOf(declined)).toMatch(/^USER_DECLINED: /);
    expect(h.elicited[0]).toMatch(/permission to clone/);
    expect(h.sandbox.stats.requests(VOICES)).toBe(0);
    answer = "accept";
    structured(await h.call("upload_voice", { path: "me.wav" }));
    expect(h.sandbox.stats.requests(VOICES)).toBe(1);
  });

  it("refuses audio outside 15 to 300 seconds and non-audio bytes", async () => {
    await open();
    await writeFile(path.join(files(), "short.wav"), renderAudio("s", 3));
    await writeFile(path.join(files(), "pic.wav"), renderImage("p", "1:1"));
    const short = await h.call("upload_voice", { path: "short.wav", rightsConfirmed: true });
    expect(textOf(short)).toMatch(
      /^INVALID_ARGUMENT: duration: the audio lasts 3\.0 s; the limit is 15 to 300 seconds/,
    );
    const pic = await h.call("upload_voice", { path: "pic.wav", rightsConfirmed: true });
    expect(textOf(pic)).toMatch(/^INVALID_ARGUMENT: path: .*image\/png; voices must be/);
    const given = await h.call("upload_voice", { path: "short.wav", duration: 400, rightsConfirmed: true });
    expect(textOf(given)).toMatch(/^INVALID_ARGUMENT: duration: .*300/);
    // A clip under the minimum is refused whatever duration the caller states: the measured one counts.
    const claimed = await h.call("upload_voice", { path: "short.wav", duration: 20, rightsConfirmed: true });
    expect(claimed.isError).toBe(true);
    expect(textOf(claimed)).toMatch(
      /^INVALID_ARGUMENT: duration: the audio lasts 3\.0 s \(measured from the audio; the duration given, 20 s, is not used\); the limit is 15 to 300 seconds/,
    );
    expect(h.sandbox.stats.requests()).toBe(0);
    // And a clip long enough is sent with its measured length, not the one stated.
    await writeFile(path.join(files(), "long.wav"), renderAudio("l", 18));
    const ok = await h.call("upload_voice", { path: "long.wav", duration: 250, rightsConfirmed: true });
    expect(ok.isError ?? false).toBe(false);
    expect(h.sandbox.stats.requests(VOICES)).toBe(1);
  });
});

describe("on protocol revision 2026-07-28", () => {
  it("asks through an input_required round and sends only after the answer", async () => {
    let answer: "accept" | "decline" = "decline";
    await open({
      modern: true,
      roots: (dir) => [path.join(dir, "files")],
      elicit: () =>
        answer === "accept" ? { action: "accept", content: { confirm: true } } : { action: "decline" },
    });
    expect(h.mcp.getNegotiatedProtocolVersion?.()).toBe("2026-07-28");
    await writeFile(path.join(files(), "me.wav"), renderAudio("me", 20));
    expect(textOf(await h.call("upload_voice", { path: "me.wav" }))).toMatch(/^USER_DECLINED: /);
    expect(h.sandbox.stats.requests(VOICES)).toBe(0);
    answer = "accept";
    structured(await h.call("upload_voice", { path: "me.wav" }));
    expect(h.elicited.length).toBe(2);
    expect(h.sandbox.stats.requests(VOICES)).toBe(1);
  });
});
