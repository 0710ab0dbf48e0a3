/** What test/viewer/host/probes.ts offers inside the view's frame, typed for both sides. */
import type { Frame } from "playwright-core";

export interface ImageInfo {
  alt: string;
  width: number;
  height: number;
  loaded: boolean;
  /** How the view loaded it: "url", "resource" or "chunks". */
  source: string;
  src: string;
}

export interface Probes {
  images(): ImageInfo[];
  audioDuration(): number;
  audioTime(): number;
  theme(): string;
  /** The first video: its length, decoded width, and whether a frame is shown. */
  video(): { duration: number; width: number; frame: boolean };
  /** Images painted, by elementtiming name, at epoch milliseconds (Element Timing). */
  painted(): Array<{ name: string; at: number }>;
  /** True when image `index` shows exactly the pixels of the PNG given in base64. */
  samePixels(index: number, base64: string): Promise<boolean>;
}

/** Runs a probe inside the view's frame (the callback is sent as source: it names nothing outside). */
export function probe<K extends keyof Probes>(
  frame: Frame,
  name: K,
  ...args: Parameters<Probes[K]>
): Promise<Awaited<ReturnType<Probes[K]>>> {
  return frame.evaluate(
    ([n, a]) =>
      (globalThis as unknown as Record<string, Record<string, (...x: unknown[]) => unknown>>).viewerProbes?.[
        n
      ]?.(...a),
    [name, args] as const,
  ) as Promise<Awaited<ReturnType<Probes[K]>>>;
}
