/**
 * The sandbox clock. Sandbox time runs `timeScale` times faster than the `now` source and
 * can be pushed forward with `advance`, so tests move tasks along without waiting.
 */
export class Clock {
  private readonly source: () => number;
  private readonly start: number;
  private readonly scale: number;
  private offset = 0;
  /** While set, the sandbox's time stands here (a journal's request replayed at its own time). */
  private pinned: number | undefined;
  constructor(source: () => number = Date.now, timeScale = 1) {
    if (!(timeScale > 0)) throw new RangeError("timeScale must be a positive number");
    this.source = source;
    this.start = source();
    this.scale = timeScale;
  }
  now(): number {
    if (this.pinned !== undefined) return this.pinned;
    return this.start + (this.source() - this.start) * this.scale + this.offset;
  }
  pin(at: number | undefined): void {
    this.pinned = at;
  }
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError("advance(ms) needs a non-negative number");
    this.offset += ms;
  }
}

export const utcMonth = (ms: number): string => new Date(ms).toISOString().slice(0, 7);
