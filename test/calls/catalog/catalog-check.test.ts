/**
 * What the model catalog rules out, judged against the sandbox's catalog (the shapes the interface
 * names): each refusal names the field, the value and what the model allows; what the catalog does
 * not say passes for the service to judge.
 */
import { describe, expect, it } from "vitest";
import { checkAgainstCatalog } from "../../../src/calls/catalog/catalog-check.js";
import { type Model, ModelListSchema } from "../../../src/client/schemas.js";
import { publicCatalog } from "../../../src/sandbox/model-catalog.js";
import { refusedArgument } from "../../helpers/refusals.js";

const MODELS: Model[] = ModelListSchema.parse(publicCatalog()).models;

const image =
  (model: string, parameters: Record<string, unknown> = {}) =>
  () =>
    checkAgainstCatalog(MODELS, "image", { model, parameters });
const video =
  (parameters: Record<string, unknown>, model = "sandbox-video-lite") =>
  () =>
    checkAgainstCatalog(MODELS, "video", { model, parameters });
const audio = (model: string, operation: string) => () =>
  checkAgainstCatalog(MODELS, "audio", { model, operation, parameters: {} });

describe("the model", () => {
  it("must be in the catalog, of the tool's kind, and not available: false", () => {
    refusedArgument(
      image("no-such-model"),
      "model",
      /"no-such-model" is not in the model catalog/,
      /sandbox-image-fast/,
    );
    refusedArgument(
      image("sandbox-video-lite"),
      "model",
      /sandbox-video-lite is a video model, not an image one/,
    );
    refusedArgument(image("sandbox-image-legacy"), "model", /not available \(available: false/);
    // The unavailable one is not offered as an alternative.
    refusedArgument(image("nope"), "model", /^(?!.*sandbox-image-legacy).*$/s);
    refusedArgument(
      video({ mode: "text-to-video" }, "sandbox-image-fast"),
      "model",
      /an image model, not a video one/,
    );
    expect(image("sandbox-image-fast")).not.toThrow();
  });

  it("an entry without `available` (video) is not refused for it", () => {
    expect(video({ mode: "text-to-video" })).not.toThrow();
  });
});

describe("image capabilities", () => {
  it("ratio and resolution among the model's; outputCount up to its maxOutputs", () => {
    refusedArgument(
      image("sandbox-image-fast", { ratio: "21:9" }),
      "parameters.ratio",
      /"21:9"/,
      /1:1, 16:9/,
    );
    refusedArgument(
      image("sandbox-image-fast", { resolution: "4K" }),
      "parameters.resolution",
      /"4K"/,
      /resolutions: 1K/,
    );
    expect(image("sandbox-image-pro", { ratio: "3:2", resolution: "4K", outputCount: 4 })).not.toThrow();
    refusedArgument(
      image("sandbox-image-edit", { outputCount: 3 }),
      "parameters.outputCount",
      /3/,
      /maxOutputs: 2/,
    );
    expect(image("sandbox-image-edit", { outputCount: 2, sourceImage: "ast_1" })).not.toThrow();
  });

  it("what the catalog does not describe passes, for the service to judge", () => {
    const bare: Model[] = [{ id: "m", name: "M", kind: "image", capabilities: { ratios: "any" } }];
    expect(() =>
      checkAgainstCatalog(bare, "image", { model: "m", parameters: { ratio: "7:5", outputCount: 4 } }),
    ).not.toThrow();
  });
});

describe("video capabilities", () => {
  it("mode, ratio, duration, resolution and audio among the model's", () => {
    const t2v = { mode: "text-to-video" };
    refusedArgument(
      video({ ...t2v, ratio: "4:3" }),
      "parameters.ratio",
      /"4:3"/,
      /aspectRatios: 16:9, 9:16, 1:1/,
    );
    refusedArgument(video({ ...t2v, duration: 7 }), "parameters.duration", /7/, /durations: 5, 10/);
    refusedArgument(video({ ...t2v, resolution: "1080p" }), "parameters.resolution", /"1080p"/, /720p/);
    refusedArgument(video({ ...t2v, audio: "on" }), "parameters.audio", /"on"/, /audio: off/);
    expect(video({ ...t2v, ratio: "1:1", duration: 10, resolution: "720p", audio: "off" })).not.toThrow();
    expect(video({ ...t2v, duration: 8, audio: "on" }, "sandbox-video-pro")).not.toThrow();
    // A duration given as text matches the catalog's number.
    expect(video({ ...t2v, duration: "5" })).not.toThrow();
  });

  it("a mode the model lists no input for is refused", () => {
    const textOnly: Model[] = [{ id: "v", name: "V", kind: "video", capabilities: { inputs: ["text"] } }];
    refusedArgument(
      () =>
        checkAgainstCatalog(textOnly, "video", {
          model: "v",
          parameters: { mode: "image-to-video", sourceImage: "a" },
        }),
      "parameters.mode",
      /needs image input/,
      /inputs: text/,
    );
    const modes: Model[] = [
      { id: "v", name: "V", kind: "video", capabilities: { modes: ["text-to-video"] } },
    ];
    refusedArgument(
      () => checkAgainstCatalog(modes, "video", { model: "v", parameters: { mode: "image-to-video" } }),
      "parameters.mode",
      /modes: text-to-video/,
    );
  });
});

describe("audio operations", () => {
  it("music is not the speech model's; speech and voice_clone are not the music model's", () => {
    refusedArgument(
      audio("service-voice", "music"),
      "operation",
      /music is not offered by model service-voice/,
      /music model/,
    );
    refusedArgument(audio("sandbox-music", "speech"), "operation", /operations: music/, /use service-voice/);
    refusedArgument(audio("sandbox-music", "voice_clone"), "operation", /use service-voice/);
    expect(audio("service-voice", "speech")).not.toThrow();
    expect(audio("service-voice", "voice_clone")).not.toThrow();
    expect(audio("sandbox-music", "music")).not.toThrow();
  });

  it("without an operations list, the interface's rule: speech belongs to service-voice", () => {
    const bare: Model[] = [
      { id: "service-voice", name: "Voice", kind: "audio", capabilities: {} },
      { id: "tunes", name: "Tunes", kind: "audio", capabilities: {} },
    ];
    const call = (model: string, operation: string) => () =>
      checkAgainstCatalog(bare, "audio", { model, operation, parameters: {} });
    refusedArgument(call("service-voice", "music"), "operation", /it is the speech model/);
    refusedArgument(call("tunes", "speech"), "operation", /it is not the speech model/);
    expect(call("tunes", "music")).not.toThrow();
  });
});

describe("what a model takes", () => {
  it("only the parameters its `parameters` list gives", () => {
    refusedArgument(
      image("sandbox-image-fast", { style: "noir" }),
      "parameters.style",
      /not a parameter of model sandbox-image-fast \(its parameters: ratio, resolution, outputCount, negativePrompt, magicPrompt, variant\)/,
    );
    refusedArgument(
      video({ mode: "text-to-video", endFrame: "ast_1" }),
      "parameters.endFrame",
      /not a parameter of model sandbox-video-lite/,
    );
    // Without a list, the flag says it.
    const flagged: Model[] = [{ id: "v", name: "V", kind: "video", capabilities: { endFrame: false } }];
    refusedArgument(
      () => checkAgainstCatalog(flagged, "video", { model: "v", parameters: { endFrame: "ast_1" } }),
      "parameters.endFrame",
      /not taken by model v \(endFrame: false in the catalog\)/,
    );
  });

  it("the source image an edit model requires", () => {
    refusedArgument(
      image("sandbox-image-edit"),
      "parameters.sourceImage",
      /required by model sandbox-image-edit \(requiresSourceImage: true in the catalog\)/,
    );
  });

  it("at most the references it takes, by resolution where the catalog says so", () => {
    const refs =
      (
        model: string,
        n: number,
        parameters: Record<string, unknown> = {},
        kind: "image" | "video" = "image",
      ) =>
      () =>
        checkAgainstCatalog(MODELS, kind, {
          model,
          parameters,
          referenceAssetIds: Array.from({ length: n }, (_, i) => `ast_${i}`),
        });
    refusedArgument(
      refs("sandbox-image-fast", 1),
      "referenceAssetIds",
      /1 given; model sandbox-image-fast takes at most 0 \(its maxReferenceImages: 0\)/,
    );
    expect(refs("sandbox-image-pro", 4)).not.toThrow();
    refusedArgument(refs("sandbox-image-pro", 5), "referenceAssetIds", /takes at most 4/);
    const t2v = { mode: "text-to-video" };
    expect(refs("sandbox-video-pro", 3, { ...t2v, resolution: "720p" }, "video")).not.toThrow();
    refusedArgument(
      refs("sandbox-video-pro", 2, { ...t2v, resolution: "1080p" }, "video"),
      "referenceAssetIds",
      /2 given; model sandbox-video-pro takes at most 1 at resolution 1080p \(its maxReferenceImagesByResolution: 720p 3, 1080p 1\)/,
    );
    // No resolution given: the model's overall maximum.
    expect(refs("sandbox-video-pro", 3, t2v, "video")).not.toThrow();
    refusedArgument(
      refs("sandbox-video-pro", 0, { ...t2v, referenceVideo: "a", referenceVideos: ["b"] }, "video"),
      "parameters.referenceVideos",
      /2 given; model sandbox-video-pro takes at most 1 \(its maxReferenceVideos: 1\)/,
    );
    refusedArgument(
      refs("sandbox-video-pro", 0, { ...t2v, referenceAudios: ["a", "b"] }, "video"),
      "parameters.referenceAudios",
      /its maxReferenceAudios: 1/,
    );
  });
});

describe("chat and extraction", () => {
  it("chat takes a text model", () => {
    refusedArgument(
      () => checkAgainstCatalog(MODELS, "text", { model: "sandbox-image-pro" }),
      "model",
      /sandbox-image-pro is an image model, not a text one \(text models in the catalog: sandbox-chat-small, sandbox-chat-large\)/,
    );
    expect(() => checkAgainstCatalog(MODELS, "text", { model: "sandbox-chat-large" })).not.toThrow();
  });

  it("extract_video takes the analysis model, not a generation model of the catalog", () => {
    const extract = (model: string) => () =>
      checkAgainstCatalog(MODELS, "extraction", { model }, "service-video-extract");
    refusedArgument(
      extract("sandbox-video-pro"),
      "model",
      /a video generation model of the catalog, not the video analysis model: extract_video takes service-video-extract/,
    );
    refusedArgument(extract("service-voice"), "model", /service-voice is an audio model of the catalog/);
    expect(extract("service-video-extract")).not.toThrow();
    // One the catalog does not list is the service's to judge (the analysis model need not be listed).
    expect(extract("another-extractor")).not.toThrow();
  });
});
