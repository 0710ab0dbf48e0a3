/**
 * The user's own media through the media viewer (src/calls/uploads/chunked-upload.ts), over a real MCP
 * client and the in-process sandbox: the model's call opens the upload form only for a client that
 * renders MCP Apps; the view's chunks become one asset or voice, sent once; every refusal comes
 * before a byte reaches the service; an upload whose outcome is unknown is never sent again.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { receiveChunk, type UploadKind } from "../../../src/calls/uploads/chunked-upload.js";
import { UPLOAD_CHUNK_BYTES, UploadStore } from "../../../src/calls/uploads/upload-store.js";
import { renderImage } from "../../../src/sandbox/media/png.js";
import { renderAudio } from "../../../src/sandbox/media/wav.js";
import { type Harness, type HarnessOptions, harness, structured, textOf } from "../../tools/harness.js";

const ASSETS = "POST /api/generate/assets";
const VOICES = "POST /api/generate/voices";
let h: Harness;
const open = async (o: HarnessOptions = { apps: true }) => {
  h = await harness(o);
  return h;
};
afterEach(() => h?.close());

type Answer = {
  upload: string;
  state: string;
  received?: number;
  asset?: { id: string; kind: string };
  voice?: { id: string };
};

const chunk = (bytes: Buffer, seq: number) =>
  bytes.subarray(seq * UPLOAD_CHUNK_BYTES, (seq + 1) * UPLOAD_CHUNK_BYTES).toString("base64");

/** Opens an upload of `bytes` as the view does; its ID. */
async function opened(bytes: Buffer, first: Record<string, unknown>): Promise<string> {
  const r = structured<Answer>(await h.call("viewer_upload", { ...first, size: bytes.byteLength }));
  expect(r).toMatchObject({ state: "receiving", received: 0, size: bytes.byteLength });
  return r.upload;
}

/** Sends `bytes` as the view does: opened, then chunk after chunk; every chunk's answer. */
async function send(
  bytes: Buffer,
  first: Record<string, unknown>,
): Promise<{ upload: string; answers: CallToolResult[] }> {
  const upload = await opened(bytes, first);
  const answers: CallToolResult[] = [];
  for (let seq = 0; seq < Math.ceil(bytes.byteLength / UPLOAD_CHUNK_BYTES); seq++) {
    const r = await h.call("viewer_upload", { upload, seq, data: chunk(bytes, seq) });
    answers.push(r);
    if (r.isError) break;
  }
  return { upload, answers };
}

describe("the model asks for the user's media", () => {
  it("opens the viewer's upload form for a client that renders MCP Apps, saying what the user may choose", async () => {
    await open();
    const asset = structured<{ upload: Record<string, unknown> }>(await h.call("upload_asset", {}));
    expect(asset.upload).toEqual({ kind: "asset", maxBytes: 31_457_280 });
    const voice = await h.call("upload_voice", {});
    expect(structured<{ upload: Record<string, unknown> }>(voice).upload).toEqual({
      kind: "voice",
      maxBytes: 52_428_800,
      minSeconds: 15,
      maxSeconds: 300,
    });
    expect(textOf(voice)).toMatch(/tick that they have the speaker's permission.*Nothing is uploaded yet/s);
    expect(h.sandbox.stats.requests()).toBe(0);
  });

  it("tells a client without MCP Apps what works instead", async () => {
    await open({});
    expect(textOf(await h.call("upload_asset", {}))).toMatch(
      /^INVALID_ARGUMENT: path, data: give exactly one: .*this host shows no media viewer/,
    );
    expect(textOf(await h.call("upload_voice", { rightsConfirmed: true }))).toMatch(
      /^INVALID_ARGUMENT: path: is needed: this host shows no media viewer/,
    );
  });
});

describe("the view's chunks", () => {
  it("become one asset, sent to the service once after the last chunk; asking again answers the same", async () => {
    await open();
    const wav = renderAudio("a tune", 100);
    expect(wav.byteLength).toBeGreaterThan(3 * UPLOAD_CHUNK_BYTES);
    const { answers } = await send(wav, { kind: "asset", name: "tune.wav" });
    const states = answers.map((r) => (r.structuredContent as Answer).state);
    expect(states).toEqual(["receiving", "receiving", "receiving", "finished"]);
    const last = structured<Answer>(answers.at(-1) as CallToolResult);
    expect(last.asset?.kind).toBe("audio");
    expect(h.sandbox.stats.requests(ASSETS)).toBe(1);
    // The last chunk again (its answer lost on the way): the same asset, nothing sent again.
    const again = await h.call("viewer_upload", { upload: last.upload, seq: 3, data: chunk(wav, 3) });
    expect(structured<Answer>(again).asset).toEqual(last.asset);
    // An earlier chunk again while receiving is answered as it stands, not stored twice.
    const upload = await opened(wav, { kind: "asset" });
    const once = structured<Answer>(await h.call("viewer_upload", { upload, seq: 0, data: chunk(wav, 0) }));
    const twice = structured<Answer>(await h.call("viewer_upload", { upload, seq: 0, data: chunk(wav, 0) }));
    expect(twice).toEqual(once);
    expect(twice.received).toBe(UPLOAD_CHUNK_BYTES);
    expect(h.sandbox.stats.requests(ASSETS)).toBe(1);
  });

  it("answers a chunk resent while its first copy is still being written as it stands, and the upload goes on", async () => {
    await open();
    const wav = renderAudio("twice", 100);
    const upload = await opened(wav, { kind: "asset", name: "twice.wav" });
    const args = { upload, seq: 0, data: chunk(wav, 0) };
    // Both copies in flight at once, as a host that timed out on the first and resent it.
    const [first, second] = await Promise.all([h.call("viewer_upload", args), h.call("viewer_upload", args)]);
    expect(first.isError, textOf(first)).toBeFalsy();
    expect(second.isError, textOf(second)).toBeFalsy();
    expect(structured<Answer>(second).state).toBe("receiving");
    let last: CallToolResult | undefined;
    for (let seq = 1; seq * UPLOAD_CHUNK_BYTES < wav.byteLength; seq++)
      last = await h.call("viewer_upload", { upload, seq, data: chunk(wav, seq) });
    expect(structured<Answer>(last as CallToolResult).asset?.kind).toBe("audio");
    expect(h.sandbox.stats.requests(ASSETS)).toBe(1);
  });

  it("become a private voice once the rights are confirmed, the duration read from the recording", async () => {
    await open();
    const wav = renderAudio("a voice", 20);
    const { answers } = await send(wav, { kind: "voice", name: "me.wav", rightsConfirmed: true });
    const voice = structured<Answer>(answers.at(-1) as CallToolResult).voice;
    expect(voice?.id).toMatch(/^voice_own_/);
    expect(h.sandbox.stats.requests(VOICES)).toBe(1);
  });

  it("are refused before any byte reaches the service: non-media, too large, no rights, before chunk 0, past the total", async () => {
    await open();
    const png = renderImage("fox", "1:1");
    const wav = renderAudio("long", 100);
    const text = Buffer.from("plain words, no picture");
    const opens: Array<[Record<string, unknown>, RegExp]> = [
      [
        { kind: "asset", size: 31_457_281 },
        /^INVALID_ARGUMENT: size: the file is 30\.0 MiB \(31,457,281 bytes\); an asset may be at most 30 MiB/,
      ],
      [
        { kind: "voice", size: 52_428_801, rightsConfirmed: true },
        /^INVALID_ARGUMENT: size: .*a voice may be at most 50 MiB/,
      ],
      [
        { kind: "voice", size: wav.byteLength },
        /^INVALID_ARGUMENT: rightsConfirmed: must be true: the user ticks/,
      ],
      [
        { kind: "asset", size: 10, seq: 0, data: "AAAA" },
        /^INVALID_ARGUMENT: upload: a chunk names the upload it belongs to/,
      ],
      [
        { upload: "upl_made_up", seq: 1, data: chunk(wav, 1) },
        /^INVALID_ARGUMENT: upload: upl_made_up is not an upload in progress/,
      ],
    ];
    for (const [args, refusal] of opens)
      expect(textOf(await h.call("viewer_upload", args)), String(refusal)).toMatch(refusal);
    // The first chunk's bytes: not media, or not a voice's audio; the upload is abandoned.
    for (const [bytes, first, refusal] of [
      [
        text,
        { kind: "asset", name: "notes.txt" },
        /^INVALID_ARGUMENT: data: notes\.txt is not a recognizable media file; uploads must be image, video or audio \(judged by its bytes\)/,
      ],
      [
        png,
        { kind: "voice", rightsConfirmed: true },
        /^INVALID_ARGUMENT: data: the file is image\/png; voices must be MP3, WAV/,
      ],
    ] as const) {
      const upload = await opened(bytes, first);
      expect(
        textOf(await h.call("viewer_upload", { upload, seq: 0, data: bytes.toString("base64") })),
      ).toMatch(refusal);
      expect(textOf(await h.call("viewer_upload", { upload, seq: 0, data: "AAAA" }))).toMatch(
        /is not an upload in progress/,
      );
    }
    // Before chunk 0 (which carries the file's type), then past the total: each abandons its upload.
    for (const [seq, afterFirst, refusal] of [
      [
        2,
        false,
        /^INVALID_ARGUMENT: seq: chunk 2 arrived before chunk 0; chunk 0 goes first, then the rest in any order; the upload was abandoned/,
      ],
      [9, true, /^INVALID_ARGUMENT: seq: chunk 9 is past the last one \(3\)/],
    ] as const) {
      const upload = await opened(wav, { kind: "asset" });
      if (afterFirst) structured(await h.call("viewer_upload", { upload, seq: 0, data: chunk(wav, 0) }));
      expect(textOf(await h.call("viewer_upload", { upload, seq, data: chunk(wav, 1) }))).toMatch(refusal);
      expect(textOf(await h.call("viewer_upload", { upload, seq: 1, data: chunk(wav, 1) }))).toMatch(
        /is not an upload in progress/,
      );
    }
    expect(textOf(await h.call("viewer_upload", { kind: "asset", size: 3 }))).not.toMatch(/INVALID/);
    expect(h.sandbox.stats.requests(ASSETS) + h.sandbox.stats.requests(VOICES)).toBe(0);
  });

  it("an upload cut off on its way to the service is not sent again: asking again tells what happened", async () => {
    await open();
    h.sandbox.faults.inject(ASSETS, { kind: "reset-after-commit" });
    const png = renderImage("cut", "1:1");
    const { upload, answers } = await send(png, { kind: "asset", name: "cut.png" });
    const cut = textOf(answers[0] as CallToolResult);
    expect(cut).toMatch(/^NETWORK_ERROR: .*may or may not have arrived.*do not repeat it blindly/s);
    // The view asks again with the last chunk: the same answer, and nothing sent a second time.
    expect(textOf(await h.call("viewer_upload", { upload, seq: 0, data: png.toString("base64") }))).toBe(cut);
    expect(h.sandbox.stats.dispatches(ASSETS)).toBe(1);
    expect(h.sandbox.stats.requests(ASSETS)).toBe(1);
  });

  it("says the upload is still on its way when the service is slow, and asking again waits for its end", async () => {
    await open();
    h.sandbox.faults.inject(ASSETS, { kind: "hang" });
    const png = renderImage("slow", "1:1");
    const store = new UploadStore<UploadKind>(await h.ledger.keyed(), await h.ledger.chunks());
    const opened = await receiveChunk(h.engine, { kind: "asset", size: png.byteLength }, { store });
    const args = { upload: opened.upload, seq: 0, data: png.toString("base64") };
    expect(await receiveChunk(h.engine, args, { store, answerWithinMs: 50 })).toMatchObject({
      state: "sending",
    });
    expect(await receiveChunk(h.engine, args, { store, answerWithinMs: 50 })).toMatchObject({
      state: "sending",
    });
    expect(h.sandbox.stats.requests(ASSETS)).toBe(1);
  });
});
