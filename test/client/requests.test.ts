/**
 * Every bound of docs/service.md (request bodies and limits), at its edge: the limit passes,
 * one past it is refused with an ArgumentError naming the field and the limit. The bodies are
 * checked by their one schema (schemas.ts with the rules of request-rules.ts), as a tool's edge
 * checks them, then serialised; bounds.test.ts shows nothing is sent.
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
import type { MediaKind } from "../../src/config/service-limits.js";
import { refusedArgument } from "../helpers/refusals.js";

const buildMediaBody = (kind: MediaKind, input: unknown) =>
  serializeMedia(kind, parseOrThrow(mediaBodySchema(kind), input));
const buildChatBody = (input: unknown) => serializeChat(parseOrThrow(ChatBodySchema, input));
const buildExtractBody = (input: unknown) => serializeExtract(parseOrThrow(ExtractRequestSchema, input));

const s = (n: number, c = "a") => c.repeat(n);

const image = (over: Record<string, unknown> = {}) => ({ model: "img", prompt: "a fox", ...over });
const speech = (over: Record<string, unknown> = {}, params: Record<string, unknown> = {}) => ({
  model: "service-voice",
  prompt: "Hello",
  operation: "speech",
  parameters: { voiceProfileId: "v1", ...params },
  ...over,
});
const music = (params: Record<string, unknown> = {}, over: Record<string, unknown> = {}) => ({
  model: "music-1",
  prompt: "a calm song",
  operation: "music",
  parameters: params,
  ...over,
});

describe("MediaRequest envelope", () => {
  it("model is 1 to 150 characters", () => {
    expect(() => buildMediaBody("image", image({ model: s(150) }))).not.toThrow();
    refusedArgument(() => buildMediaBody("image", image({ model: s(151) })), "model", /150/);
    refusedArgument(() => buildMediaBody("image", image({ model: "" })), "model", /1/);
  });

  it("prompt is at most 30,000 characters", () => {
    const t2v = { parameters: { mode: "text-to-video" } };
    expect(() => buildMediaBody("video", image({ prompt: s(30_000), ...t2v }))).not.toThrow();
    refusedArgument(
      () => buildMediaBody("video", image({ prompt: s(30_001), ...t2v })),
      "prompt",
      /at most 30,000 characters/,
    );
  });

  it("referenceAssetIds: at most 10, each 1 to 128 characters", () => {
    const ten = Array.from({ length: 10 }, (_, i) => `a${i}`);
    expect(() => buildMediaBody("image", image({ referenceAssetIds: ten }))).not.toThrow();
    refusedArgument(
      () => buildMediaBody("image", image({ referenceAssetIds: [...ten, "a10"] })),
      "referenceAssetIds",
      /10/,
    );
    expect(() => buildMediaBody("image", image({ referenceAssetIds: [s(128)] }))).not.toThrow();
    refusedArgument(
      () => buildMediaBody("image", image({ referenceAssetIds: [s(129)] })),
      "referenceAssetIds[0]",
      /128/,
    );
    refusedArgument(
      () => buildMediaBody("image", image({ referenceAssetIds: [""] })),
      "referenceAssetIds[0]",
    );
  });

  it("maxGems is a whole number 0 to 1,000,000,000", () => {
    expect(() => buildMediaBody("image", image({ maxGems: 0 }))).not.toThrow();
    expect(() => buildMediaBody("image", image({ maxGems: 1_000_000_000 }))).not.toThrow();
    refusedArgument(
      () => buildMediaBody("image", image({ maxGems: 1_000_000_001 })),
      "maxGems",
      /at most 1,000,000,000/,
    );
    refusedArgument(() => buildMediaBody("image", image({ maxGems: -1 })), "maxGems", /0/);
    refusedArgument(() => buildMediaBody("image", image({ maxGems: 1.5 })), "maxGems");
  });

  it("unknown top-level fields are refused by name", () => {
    refusedArgument(() => buildMediaBody("image", image({ webhook: "x" })), "(input)", /webhook/);
  });

  for (const name of ["provider", "model", "prompt", "sourceTool"]) {
    it(`parameters.${name} is refused`, () => {
      refusedArgument(
        () => buildMediaBody("image", image({ parameters: { [name]: "x" } })),
        `parameters.${name}`,
      );
    });
  }

  it("operation belongs to audio only", () => {
    refusedArgument(() => buildMediaBody("image", image({ operation: "speech" })), "operation", /audio/);
  });
});

describe("image parameters", () => {
  it("outputCount 1 to 4", () => {
    for (const n of [1, 4])
      expect(() => buildMediaBody("image", image({ parameters: { outputCount: n } }))).not.toThrow();
    refusedArgument(
      () => buildMediaBody("image", image({ parameters: { outputCount: 0 } })),
      "parameters.outputCount",
      /1/,
    );
    refusedArgument(
      () => buildMediaBody("image", image({ parameters: { outputCount: 5 } })),
      "parameters.outputCount",
      /4/,
    );
  });
  it("negativePrompt up to 1,000 characters", () => {
    expect(() => buildMediaBody("image", image({ parameters: { negativePrompt: s(1000) } }))).not.toThrow();
    refusedArgument(
      () => buildMediaBody("image", image({ parameters: { negativePrompt: s(1001) } })),
      "parameters.negativePrompt",
      /1000/,
    );
  });
  it("background is auto, transparent or opaque", () => {
    for (const b of ["auto", "transparent", "opaque"]) {
      expect(() => buildMediaBody("image", image({ parameters: { background: b } }))).not.toThrow();
    }
    refusedArgument(
      () => buildMediaBody("image", image({ parameters: { background: "clear" } })),
      "parameters.background",
    );
  });
  it("model-specific names pass through for the service to judge", () => {
    const { body } = buildMediaBody("image", image({ parameters: { style: "ink", lora: { id: "x" } } }));
    expect(body.parameters).toEqual({ style: "ink", lora: { id: "x" } });
  });
});

describe("video parameters", () => {
  it("mode is required: text-to-video or image-to-video; image-to-video needs sourceImage", () => {
    refusedArgument(() => buildMediaBody("video", image()), "parameters.mode", /required.*text-to-video/);
    expect(() => buildMediaBody("video", image({ parameters: { mode: "text-to-video" } }))).not.toThrow();
    refusedArgument(
      () => buildMediaBody("video", image({ parameters: { mode: "video-to-video" } })),
      "parameters.mode",
    );
    refusedArgument(
      () => buildMediaBody("video", image({ parameters: { mode: "image-to-video" } })),
      "parameters.sourceImage",
      /image-to-video/,
    );
    expect(() =>
      buildMediaBody("video", image({ parameters: { mode: "image-to-video", sourceImage: "asset_1" } })),
    ).not.toThrow();
  });
});

describe("audio: speech and voice_clone", () => {
  it("operation is required", () => {
    refusedArgument(
      () => buildMediaBody("audio", { model: "service-voice", prompt: "hi" }),
      "operation",
      /speech, music/,
    );
    refusedArgument(() => buildMediaBody("audio", speech({ operation: "sing" })), "operation");
  });
  for (const op of ["speech", "voice_clone"]) {
    it(`${op}: voiceProfileId required, prompt up to 2,000, no media references`, () => {
      refusedArgument(
        () => buildMediaBody("audio", { ...speech({ operation: op }), parameters: {} }),
        "parameters.voiceProfileId",
      );
      expect(() => buildMediaBody("audio", speech({ operation: op, prompt: s(2000) }))).not.toThrow();
      refusedArgument(
        () => buildMediaBody("audio", speech({ operation: op, prompt: s(2001) })),
        "prompt",
        /2,000/,
      );
      refusedArgument(
        () => buildMediaBody("audio", speech({ operation: op, referenceAssetIds: ["a1"] })),
        "referenceAssetIds",
      );
    });
  }
  it("speed 0.5 to 2, volume -6 to 6, temperature 0 to 1", () => {
    const edges: [string, number, number, number, number][] = [
      ["speed", 0.5, 2, 0.49, 2.01],
      ["volume", -6, 6, -6.01, 6.01],
      ["temperature", 0, 1, -0.01, 1.01],
    ];
    for (const [name, lo, hi, below, above] of edges) {
      expect(() => buildMediaBody("audio", speech({}, { [name]: lo }))).not.toThrow();
      expect(() => buildMediaBody("audio", speech({}, { [name]: hi }))).not.toThrow();
      refusedArgument(
        () => buildMediaBody("audio", speech({}, { [name]: below })),
        `parameters.${name}`,
        new RegExp(String(lo)),
      );
      refusedArgument(
        () => buildMediaBody("audio", speech({}, { [name]: above })),
        `parameters.${name}`,
        new RegExp(String(hi)),
      );
    }
  });
});

describe("audio: music", () => {
  it("musicMode and instrumental enums", () => {
    expect(() => buildMediaBody("audio", music({ musicMode: "simple", instrumental: "on" }))).not.toThrow();
    refusedArgument(() => buildMediaBody("audio", music({ musicMode: "expert" })), "parameters.musicMode");
    refusedArgument(() => buildMediaBody("audio", music({ instrumental: true })), "parameters.instrumental");
  });
  it("advanced-only fields are refused outside advanced mode", () => {
    for (const [name, value] of [
      ["style", "jazz"],
      ["title", "T"],
      ["negativeTags", "x"],
      ["vocalGender", "f"],
      ["duration", "60"],
    ]) {
      refusedArgument(
        () => buildMediaBody("audio", music({ musicMode: "simple", [name as string]: value })),
        `parameters.${name}`,
        /advanced/,
      );
      expect(() =>
        buildMediaBody("audio", music({ musicMode: "advanced", [name as string]: value })),
      ).not.toThrow();
    }
  });
  it("advanced limits: style 1,000, title 80, negativeTags 200, enums for vocalGender and duration", () => {
    const adv = (p: Record<string, unknown>) => music({ musicMode: "advanced", ...p });
    expect(() =>
      buildMediaBody("audio", adv({ style: s(1000), title: s(80), negativeTags: s(200) })),
    ).not.toThrow();
    refusedArgument(() => buildMediaBody("audio", adv({ style: s(1001) })), "parameters.style", /1000/);
    refusedArgument(() => buildMediaBody("audio", adv({ title: s(81) })), "parameters.title", /80/);
    refusedArgument(
      () => buildMediaBody("audio", adv({ negativeTags: s(201) })),
      "parameters.negativeTags",
      /200/,
    );
    refusedArgument(() => buildMediaBody("audio", adv({ vocalGender: "x" })), "parameters.vocalGender");
    for (const d of ["off", "30", "60", "120", "180", "240"]) {
      expect(() => buildMediaBody("audio", adv({ duration: d }))).not.toThrow();
    }
    refusedArgument(() => buildMediaBody("audio", adv({ duration: "45" })), "parameters.duration");
    refusedArgument(() => buildMediaBody("audio", adv({ duration: 60 })), "parameters.duration");
  });
  it("simple prompt up to 5,000 characters; advanced follows the envelope", () => {
    expect(() => buildMediaBody("audio", music({ musicMode: "simple" }, { prompt: s(5000) }))).not.toThrow();
    refusedArgument(
      () => buildMediaBody("audio", music({ musicMode: "simple" }, { prompt: s(5001) })),
      "prompt",
      /5,000/,
    );
    expect(() =>
      buildMediaBody("audio", music({ musicMode: "advanced" }, { prompt: s(5001) })),
    ).not.toThrow();
  });
  it("coverAudio or one referenceAssetIds entry, not both, not two", () => {
    expect(() => buildMediaBody("audio", music({ coverAudio: "a1" }))).not.toThrow();
    expect(() => buildMediaBody("audio", music({}, { referenceAssetIds: ["a1"] }))).not.toThrow();
    refusedArgument(
      () => buildMediaBody("audio", music({}, { referenceAssetIds: ["a1", "a2"] })),
      "referenceAssetIds",
      /1/,
    );
    refusedArgument(
      () => buildMediaBody("audio", music({ coverAudio: "a1" }, { referenceAssetIds: ["a2"] })),
      "parameters.coverAudio",
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
