/** The kinds of assets a key's answers named: kept, refreshed when seen again, bounded. */
import { describe, expect, it } from "vitest";
import { AssetKinds, MAX_KNOWN_ASSETS } from "../../src/client/asset-kinds.js";

describe("AssetKinds", () => {
  it("keeps what uploads and task outputs said, and forgets the oldest past its bound", () => {
    const kinds = new AssetKinds();
    kinds.noteUpload({ id: "first", kind: "image", state: "ready", url: null });
    kinds.noteTask({
      id: "task_1",
      status: "succeeded",
      quotedGems: 1,
      chargedGems: 1,
      releasedGems: 0,
      error: null,
      outputs: [
        {
          index: 0,
          status: "succeeded",
          asset: { id: "out", kind: "video", mimeType: "video/mp4", url: "u" },
        },
        { index: 1, status: "failed", asset: null },
      ],
    });
    expect(kinds.get("first")).toEqual({ kind: "image", origin: { from: "upload" } });
    expect(kinds.get("out")).toEqual({ kind: "video", origin: { from: "task", taskId: "task_1" } });
    // Seen again, "first" is the most recent; then enough others push "out" out, not "first".
    kinds.note("first", "image", { from: "upload" });
    for (let i = 0; i < MAX_KNOWN_ASSETS - 1; i++) kinds.note(`a${i}`, "audio", { from: "upload" });
    expect(kinds.get("out")).toBeUndefined();
    expect(kinds.get("first")?.kind).toBe("image");
  });
});
