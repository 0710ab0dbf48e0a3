/**
 * Every bound of docs/service.md for media bodies (chat and extraction: chat-requests.test.ts), at its edge: the limit passes,
 * one past it is refused with an ArgumentError naming the field and the limit. The bodies are
 * checked by their one schema (schemas.ts with the rules of request-rules.ts), as a tool's edge
 * checks them, then serialised; bounds.test.ts shows nothing is sent.
 */
import { describe, expect, it } from "vitest";
import { mediaBodySchema } from "../../src/client/request-rules.js";
import { buildMediaBody as serializeMedia } from "../../src/client/requests.js";
import { parseOrThrow } from "../../src/client/schemas.js";
import type { MediaKind } from "../../src/config/service-limits.js";
import { refusedArgument } from "../helpers/refusals.js";

const buildMediaBody = (kind: MediaKind, input: unknown) =>
  serializeMedia(kind, parseOrThrow(mediaBodySchema(kind), input));

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
