/** The small statistics and printing the benchmarks' parts share (bench/server.ts, bench/paid-call.ts). */

export const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** The nearest-rank percentile `p` (0 to 100). */
export const percentile = (xs: number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
export const print = (line: string): void => void process.stdout.write(`${line}\n`);
export const ms = (x: number): string => `${x.toFixed(1)} ms`;

/** How long `fn` took, in milliseconds. */
export async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}
