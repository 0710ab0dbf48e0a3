/**
 * The kind of each asset this client's answers named: an upload's asset, a task's outputs. The
 * service has no asset read (docs/service.md#endpoints), so this is what a caller can know of an
 * asset ID before sending it as a reference, and a wrong kind (an image passed as the video to
 * analyse) can be refused before anything is spent. Bounded: the oldest are forgotten first, and a
 * forgotten asset is simply not judged.
 */
import type { Asset, Task } from "./schemas.js";

/** Where a kind was learnt: an upload's answer, or the outputs of a task. */
export type AssetOrigin = { from: "upload" } | { from: "task"; taskId: string };

export interface KnownAsset {
  kind: string;
  origin: AssetOrigin;
}

/** Enough for every output of a long session; about 100 bytes each. */
export const MAX_KNOWN_ASSETS = 10_000;

export class AssetKinds {
  readonly #known = new Map<string, KnownAsset>();

  /** How many assets are remembered (what an engine's memory estimate counts, engine.ts). */
  get size(): number {
    return this.#known.size;
  }

  /** What an answer said of an asset; refreshed as most recent when seen again. */
  note(id: string, kind: string, origin: AssetOrigin): void {
    this.#known.delete(id);
    this.#known.set(id, { kind, origin });
    if (this.#known.size > MAX_KNOWN_ASSETS) {
      const oldest = this.#known.keys().next().value;
      if (oldest !== undefined) this.#known.delete(oldest);
    }
  }

  noteUpload(asset: Asset): void {
    this.note(asset.id, asset.kind, { from: "upload" });
  }

  noteTask(task: Task): void {
    for (const output of task.outputs) {
      const asset = output.asset;
      if (asset !== null && asset !== undefined)
        this.note(asset.id, asset.kind, { from: "task", taskId: task.id });
    }
  }

  get(id: string): KnownAsset | undefined {
    return this.#known.get(id);
  }
}
