/**
 * References whose kind an earlier answer named (an upload, a task's outputs) are refused when the
 * field takes another kind, naming where the kind came from; an asset no answer named passes.
 */
import { describe, expect, it } from "vitest";
import { checkReferenceKinds, referencesOf } from "../../../src/calls/catalog/reference-kinds.js";
import { AssetKinds } from "../../../src/client/asset-kinds.js";
import { refusedArgument } from "../../helpers/refusals.js";

describe("references of the wrong kind, as earlier answers named them", () => {
  const assets = new AssetKinds();
  assets.noteUpload({ id: "ast_img", kind: "image", state: "ready", url: null });
  assets.noteTask({
    id: "task_1",
    status: "succeeded",
    quotedGems: 2,
    chargedGems: 2,
    releasedGems: 0,
    error: null,
    outputs: [
      {
        index: 0,
        status: "succeeded",
        asset: { id: "ast_out", kind: "video", mimeType: "video/mp4", url: "u" },
      },
    ],
  });
  const check = (r: Parameters<typeof referencesOf>[0]) => () => checkReferenceKinds(assets, referencesOf(r));

  it("refuses an image as the video to analyse, a video as an image reference, naming where the kind came from", () => {
    refusedArgument(
      check({ kind: "extraction", videoAssetId: "ast_img" }),
      "videoAssetId",
      /ast_img is an image asset \(as upload_asset reported it\), not a video/,
    );
    refusedArgument(
      check({ kind: "image", referenceAssetIds: ["ast_img", "ast_out"] }),
      "referenceAssetIds[1]",
      /ast_out is a video asset \(an output of task task_1\), not an image/,
    );
    refusedArgument(
      check({ kind: "video", parameters: { endFrame: "ast_out" } }),
      "parameters.endFrame",
      /is a video asset/,
    );
    refusedArgument(
      check({ kind: "audio", parameters: { coverAudio: "ast_img" } }),
      "parameters.coverAudio",
      /is an image asset .*not an audio/,
    );
  });

  it("passes the right kind, and an asset no answer named", () => {
    expect(check({ kind: "extraction", videoAssetId: "ast_out" })).not.toThrow();
    expect(
      check({ kind: "video", parameters: { sourceImage: "ast_img", referenceVideos: ["ast_out"] } }),
    ).not.toThrow();
    expect(check({ kind: "extraction", videoAssetId: "ast_unknown" })).not.toThrow();
  });
});
