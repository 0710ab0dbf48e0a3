/**
 * Read-outs of the view's page that the browser tests evaluate inside its frame (injected as a
 * script after the view loads; the frame's CSP allows inline scripts, as hosts' do).
 */
import type { Probes } from "../probes-api.js";

async function pixels(source: ImageBitmap): Promise<Uint8ClampedArray> {
  const canvas = new OffscreenCanvas(source.width, source.height);
  const g = canvas.getContext("2d") as OffscreenCanvasRenderingContext2D;
  g.drawImage(source, 0, 0);
  return g.getImageData(0, 0, source.width, source.height).data;
}

/** Element Timing entries of the view's images (buffered from the start of the page). */
const painted: Array<{ name: string; at: number }> = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries() as Array<
    PerformanceEntry & { renderTime: number; loadTime: number; identifier: string }
  >) {
    // renderTime is the paint; a cross-origin image without Timing-Allow-Origin reports only loadTime.
    painted.push({ name: e.identifier, at: performance.timeOrigin + (e.renderTime || e.loadTime) });
  }
}).observe({ type: "element", buffered: true });

const images = () => [...document.querySelectorAll("img")];
const audio = () => document.querySelector("audio");

const probes: Probes = {
  images: () =>
    images().map((i) => ({
      alt: i.alt,
      width: i.naturalWidth,
      height: i.naturalHeight,
      loaded: i.complete && i.naturalWidth > 0,
      source: i.dataset.source ?? "",
      src: i.src,
    })),
  audioDuration: () => audio()?.duration ?? 0,
  audioTime: () => audio()?.currentTime ?? 0,
  painted: () => painted,
  video: () => {
    const v = document.querySelector("video");
    // readyState 2 (HAVE_CURRENT_DATA) or more: a frame is decoded and shown as the poster.
    return { duration: v?.duration ?? 0, width: v?.videoWidth ?? 0, frame: (v?.readyState ?? 0) >= 2 };
  },
  theme: () => document.documentElement.dataset.theme ?? "",
  async samePixels(index, base64) {
    const img = images()[index];
    if (!img) return false;
    const shown = await pixels(await createImageBitmap(img));
    const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
    const want = await pixels(await createImageBitmap(new Blob([bytes], { type: "image/png" })));
    return shown.length > 0 && shown.length === want.length && shown.every((v, k) => v === want[k]);
  },
};

(globalThis as unknown as { viewerProbes: Probes }).viewerProbes = probes;
