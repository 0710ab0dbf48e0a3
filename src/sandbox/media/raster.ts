/**
 * Deterministic pictures from a seed: a two-colour gradient with a few shapes, so the same
 * prompt always gives the same image and different prompts visibly differ. `t` (0..1) moves
 * the shapes, which the video encoder uses to make frames that change over time.
 */
import { createHash } from "node:crypto";

export interface Raster {
  width: number;
  height: number;
  /** RGB, 3 bytes per pixel, row-major. */
  rgb: Uint8Array;
}

export function seedBytes(seed: string): Uint8Array {
  return createHash("sha256").update(seed).digest();
}

export function drawScene(seed: string, width: number, height: number, t = 0): Raster {
  const h = seedBytes(seed);
  const b = (i: number): number => h[i % h.length] as number;
  const c1 = [b(0), b(1), b(2)] as const;
  const c2 = [b(3), b(4), b(5)] as const;
  const shapes = Array.from({ length: 3 + (b(6) % 3) }, (_, i) => ({
    cx: (b(7 + i * 4) / 255) * width + Math.sin(t * Math.PI * 2 + i) * width * 0.15,
    cy: (b(8 + i * 4) / 255) * height + Math.cos(t * Math.PI * 2 + i) * height * 0.15,
    r: (0.08 + (b(9 + i * 4) / 255) * 0.2) * Math.min(width, height),
    square: b(10 + i * 4) % 2 === 0,
    colour: [b(20 + i), b(23 + i), b(26 + i)] as const,
  }));
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const k = (x / Math.max(1, width - 1) + y / Math.max(1, height - 1)) / 2;
      let r = c1[0] + (c2[0] - c1[0]) * k;
      let g = c1[1] + (c2[1] - c1[1]) * k;
      let bl = c1[2] + (c2[2] - c1[2]) * k;
      for (const s of shapes) {
        const dx = Math.abs(x - s.cx);
        const dy = Math.abs(y - s.cy);
        const inside = s.square ? dx <= s.r && dy <= s.r : dx * dx + dy * dy <= s.r * s.r;
        if (inside) [r, g, bl] = s.colour;
      }
      const o = (y * width + x) * 3;
      rgb[o] = r;
      rgb[o + 1] = g;
      rgb[o + 2] = bl;
    }
  }
  return { width, height, rgb };
}
