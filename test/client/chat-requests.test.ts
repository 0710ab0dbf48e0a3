/**
 * The chat and extraction bodies' bounds of docs/service.md, at their edges, as requests.test.ts
 * does for media bodies: the limit passes, one past it is refused naming the field and the limit.
 * And the canonical bytes every body is sent (and replayed) as.
 */
import { describe, expect, it } from "vitest";
import { ChatBodySchema, mediaBodySchema } from "../../src/client/request-rules.js";
import {
  assertMaxBytes,
  canonicalJson,
  buildChatBody as serializeChat,
  buildExtractBody as serializeExtract,
  buildMediaBody as serializeMedia,
} from "../../src/client/requests.js";
import { ExtractRequestSchema, parseOrThrow } from "../../src/client/schemas.js";
import { refusedArgument } from "../helpers/refusals.js";

const image = (over: Record<string, unknown> = {}) => ({ model: "img", prompt: "a fox", ...over });
const buildMediaBody = (kind: "image", input: unknown) =>
  serializeMedia(kind, parseOrThrow(mediaBodySchema(kind), input));
const buildChatBody = (input: unknown) => serializeChat(parseOrThrow(ChatBodySchema, input));
const buildExtractBody = (input: unknown) => serializeExtract(parseOrThrow(ExtractRequestSchema, input));

const s = (n: number, c = "a") => c.repeat(n);

describe("chat request", () => {
  const msg = (content: string, role = "user") => ({ role, content });
  const chat = (over: Record<string, unknown> = {}) => ({ model: "text-1", messages: [msg("hi")], ...over });

  it("messages: 1 to 60, each content up to 30,000 characters, roles by name", () => {
    expect(() => buildChatBody(chat({ messages: Array.from({ length: 60 }, () => msg("x")) }))).not.toThrow();
    refusedArgument(
      () => buildChatBody(chat({ messages: Array.from({ length: 61 }, () => msg("x")) })),
      "messages",
      /60/,
    );
    refusedArgument(() => buildChatBody(chat({ messages: [] })), "messages", /1/);
    expect(() => buildChatBody(chat({ messages: [msg(s(30_000))] }))).not.toThrow();
    refusedArgument(
      () => buildChatBody(chat({ messages: [msg(s(30_001))] })),
      "messages[0].content",
      /at most 30,000 characters/,
    );
    refusedArgument(() => buildChatBody(chat({ messages: [msg("x", "tool")] })), "messages[0].role");
    refusedArgument(
      () => buildChatBody(chat({ messages: [{ role: "user", content: [{ type: "text" }] }] })),
      "messages[0].content",
    );
  });

  it("model, max_tokens, temperature, top_p, response_format, maxGems", () => {
    expect(() =>
      buildChatBody(chat({ model: s(150), max_tokens: 8192, temperature: 2, top_p: 1, maxGems: 1_000_000 })),
    ).not.toThrow();
    expect(() => buildChatBody(chat({ max_tokens: 1, temperature: 0, top_p: 0, maxGems: 0 }))).not.toThrow();
    refusedArgument(() => buildChatBody(chat({ model: s(151) })), "model", /150/);
    refusedArgument(() => buildChatBody(chat({ max_tokens: 0 })), "max_tokens", /1/);
    refusedArgument(() => buildChatBody(chat({ max_tokens: 8193 })), "max_tokens", /8192/);
    refusedArgument(() => buildChatBody(chat({ temperature: 2.01 })), "temperature", /2/);
    refusedArgument(() => buildChatBody(chat({ top_p: 1.01 })), "top_p", /1/);
    refusedArgument(() => buildChatBody(chat({ maxGems: 1_000_001 })), "maxGems", /at most 1,000,000$/);
    expect(() => buildChatBody(chat({ response_format: { type: "json_object" } }))).not.toThrow();
    refusedArgument(
      () => buildChatBody(chat({ response_format: { type: "json_schema" } })),
      "response_format.type",
    );
    refusedArgument(() => buildChatBody(chat({ tools: [] })), "(input)", /tools/);
  });

  it("the serialized conversation is at most 128,000 bytes", () => {
    // Five messages of multi-byte text (3 bytes per character), sized so the JSON is exactly the limit.
    const overhead = Buffer.byteLength(canonicalJson(Array.from({ length: 5 }, () => msg(""))));
    const room = 128_000 - overhead;
    const per = Math.floor(room / 5 / 3);
    const contents = Array.from({ length: 5 }, () => "€".repeat(per));
    let left = room - per * 3 * 5;
    contents[0] += "a".repeat(left);
    left = 0;
    const at = contents.map((c) => msg(c));
    expect(Buffer.byteLength(canonicalJson(at))).toBe(128_000);
    expect(() => buildChatBody(chat({ messages: at }))).not.toThrow();
    const past = [...at.slice(0, 4), msg(`${at[4]?.content}a`)];
    refusedArgument(
      () => buildChatBody(chat({ messages: past })),
      "messages",
      /128,000 bytes \(got 128,001\)/,
    );
    expect(left).toBe(0);
  });

  it("canonical bytes for chat keep the stream flag", () => {
    expect(buildChatBody(chat({ stream: true })).bytes).toBe(
      '{"messages":[{"content":"hi","role":"user"}],"model":"text-1","stream":true}',
    );
  });
});

describe("extraction request", () => {
  const ex = (over: Record<string, unknown> = {}) => ({
    model: "service-video-extract",
    videoAssetId: "a1",
    ...over,
  });
  it("videoAssetId 1 to 128, prompt up to 2,000, maxGems up to 1,000,000", () => {
    expect(() =>
      buildExtractBody(ex({ videoAssetId: s(128), prompt: s(2000), maxGems: 1_000_000 })),
    ).not.toThrow();
    refusedArgument(() => buildExtractBody(ex({ videoAssetId: s(129) })), "videoAssetId", /128/);
    refusedArgument(() => buildExtractBody(ex({ videoAssetId: "" })), "videoAssetId");
    refusedArgument(() => buildExtractBody(ex({ prompt: s(2001) })), "prompt", /2000/);
    refusedArgument(() => buildExtractBody(ex({ maxGems: 1_000_001 })), "maxGems");
    refusedArgument(() => buildExtractBody(ex({ frames: 3 })), "(input)", /frames/);
  });
  it("the JSON size bound: 16,000 bytes passes, 16,001 is refused", () => {
    // Valid fields cannot reach it (the prompt is capped at 2,000 characters), so the bound is shown directly.
    expect(() => assertMaxBytes(s(16_000), 16_000, "(request)", "the extraction request JSON")).not.toThrow();
    refusedArgument(
      () => assertMaxBytes(s(16_001), 16_000, "(request)", "the extraction request JSON"),
      "(request)",
      /16,000 bytes/,
    );
  });
});

describe("canonical bytes", () => {
  it("identical input in any key order gives identical bytes", () => {
    const a = buildMediaBody("image", {
      prompt: "p",
      model: "m",
      parameters: { ratio: "1:1", outputCount: 2 },
    });
    const b = buildMediaBody("image", {
      parameters: { outputCount: 2, ratio: "1:1" },
      model: "m",
      prompt: "p",
    });
    expect(a.bytes).toBe(b.bytes);
    expect(a.bytes).toBe(
      '{"model":"m","parameters":{"outputCount":2,"ratio":"1:1"},"prompt":"p","referenceAssetIds":[]}',
    );
  });
  it("sorts nested keys, drops undefined, refuses values JSON cannot carry", () => {
    expect(canonicalJson({ b: { d: 1, c: [{ z: 1, y: undefined }] }, a: undefined })).toBe(
      '{"b":{"c":[{"z":1}],"d":1}}',
    );
    refusedArgument(() => buildMediaBody("image", image({ parameters: { seed: 10n } })), "parameters.seed");
    refusedArgument(() => canonicalJson({ x: Number.NaN }), "x", /finite/);
    refusedArgument(
      () => buildMediaBody("image", image({ parameters: { when: new Date(0) } })),
      "parameters.when",
    );
  });
});
