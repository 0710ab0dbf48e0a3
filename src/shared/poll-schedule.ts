/**
 * When to read a task while waiting for it. Two schedules:
 *
 * - fixed: the service's polling guidance (docs/service.md#polling: back off after about 2, 4, 8,
 *   then every 15 seconds, with jitter), used for a model with no history;
 * - learned: from how long this model's recent tasks took for this key, polls placed around the
 *   expected finish. Two rules bound it: polls are never closer than the guidance's first
 *   interval (2 s), and by any moment of a wait it has made no more reads than the fixed
 *   schedule would have (its n-th read never comes before the fixed schedule's n-th).
 *
 * Each past task is known only as an interval: it was still running when last seen running
 * (`pendingMs`) and finished by the time it was first seen terminal (`seenMs`), both counted
 * from its submission. While those intervals agree on one duration, the learned schedule probes
 * between the latest "still running" and the earliest "finished" until they are within
 * `TIGHT` of each other, then aims that margin past the latest "still running" (runs that
 * disagree by under `NOISE` count as one duration with noise). When they disagree more
 * (durations vary), it picks the first read that would have seen the recent tasks soonest, and
 * follows it with reads every 2 s.
 */
import { LIMITS } from "../config/service-limits.js";

/** One past task of the same model: milliseconds from submission. */
export interface DurationSample {
  /** Last seen still running (0: only the submission's own answer). */
  pendingMs: number;
  /** First seen terminal. */
  seenMs: number;
}

export interface PollSchedule {
  /** Milliseconds after the wait began when read number `n` (from 0) is due; `lastMs`: when read n-1 was made. */
  dueMs(n: number, lastMs: number | undefined): number;
  /** The earliest a read `n` may come (a last read at the deadline must not break the rules). */
  earliestMs(n: number, lastMs: number | undefined): number;
  /** What the schedule expects, for progress messages; absent for the fixed one. */
  readonly expected?: { durationMs: number; runs: number; sinceSubmitMs: number };
}

/** The guidance's first interval: the learned schedule never reads more often. */
export const MIN_GAP_MS = (LIMITS.polling.scheduleSeconds[0] ?? 2) * 1000;
/** Recent tasks a model's estimate uses. */
export const WINDOW = 12;
/** Older "still running" evidence is dropped after this many runs, so a faster service is noticed. */
export const LOWER_BOUND_AGE = 48;
/**
 * Bounds within this fraction of each other count as one known duration. Narrow, so that a read
 * aimed past the latest "still running" lands within 1% of the finish (the 3% goal for the time
 * to see a finished task includes presenting it, docs/benchmarks.md#polling).
 */
const TIGHT = 0.01;
/**
 * The least margin past the latest "still running". Bounds are measured so that noise only widens
 * them (a read counts as "still running" from when it was sent, both from the submission's answer:
 * src/client/poll.ts, src/ledger/durations.ts), so it covers only the service's own variation.
 */
const MARGIN_MS = 30;
/** A model with many runs whose bounds expired is probed no lower than this fraction below its finish. */
const REPROBE = 0.12;
/** Runs that disagree by at most this fraction still count as one duration with noise. */
const NOISE = 0.05;
/** Where between the bounds a probe goes (0: the latest "still running", 1: the earliest "finished"). */
const PROBE = 0.7;
/** A "still running" bound counts only when the next read came within this (a read every 2 s). */
const TIGHT_GAP_MS = 2500;
/** ±20% around the schedule: polls spread out without ever collapsing toward zero. */
const JITTER = 0.2;

/** The fixed schedule's nominal read times, from the start of a wait: 0, 2, 6, 14, 29, 44, … s. */
export function fixedReadMs(n: number): number {
  const steps = LIMITS.polling.scheduleSeconds;
  let t = 0;
  for (let i = 0; i < n; i++) t += (steps[Math.min(i, steps.length - 1)] ?? 15) * 1000;
  return t;
}

/** The fixed schedule's delay before read `pollIndex + 1`, with jitter. */
export function pollDelayMs(pollIndex: number, random: () => number): number {
  const steps = LIMITS.polling.scheduleSeconds;
  const base = (steps[Math.min(pollIndex, steps.length - 1)] ?? 15) * 1000;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

export function fixedSchedule(random: () => number = Math.random): PollSchedule {
  const due = (n: number, lastMs: number | undefined) =>
    n === 0 || lastMs === undefined ? 0 : lastMs + pollDelayMs(n - 1, random);
  // A wait cut by its deadline reads once more at the deadline (the task as it stands then).
  return { dueMs: due, earliestMs: (_n, lastMs) => lastMs ?? 0 };
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};

/** When a read train (aim, then every 2 s, within the budget) first sees a task of `durationMs`. */
export function seenBy(aimMs: number, durationMs: number): number {
  let last = 0;
  for (let n = 0; n < 10_000; n++) {
    const t = Math.max(n === 0 ? aimMs : last, fixedReadMs(n), last + MIN_GAP_MS);
    if (t >= durationMs) return t;
    last = t;
  }
  return durationMs;
}

/** The earliest first read at or after `aimMs` from which reads every 2 s reach `untilMs` unclipped. */
function unclipped(aimMs: number, untilMs: number): number {
  const fits = (a: number) => {
    for (let n = 0; a + n * MIN_GAP_MS < untilMs; n++) if (a + n * MIN_GAP_MS < fixedReadMs(n)) return false;
    return true;
  };
  let a = aimMs;
  while (a < untilMs && !fits(a)) a += MIN_GAP_MS / 4;
  return Math.min(a, untilMs);
}

export interface Plan {
  /** First read, in milliseconds after submission. */
  aimMs: number;
  /** The duration expected, for progress messages. */
  durationMs: number;
  runs: number;
}

/**
 * The first read for the next task of a model, from its samples, newest first; undefined
 * without history (the fixed schedule applies).
 */
export function plan(samples: readonly DurationSample[]): Plan | undefined {
  const recent = samples.slice(0, WINDOW);
  if (recent.length === 0) return undefined;
  const tight = samples
    .slice(0, LOWER_BOUND_AGE)
    .filter((s) => s.pendingMs > 0 && s.seenMs - s.pendingMs <= TIGHT_GAP_MS)
    .slice(0, WINDOW);
  const hi = Math.min(...recent.map((s) => s.seenMs));
  // Without a tight "still running" bound, the loose ones (the fixed schedule's) are the floor; a
  // model with many runs is also probed no lower than a little below its finish (its bounds
  // expired: is it faster now?).
  // (A "still running" within the first second is the submission's own answer: no evidence.)
  const loose = Math.min(
    hi,
    Math.max(0, ...recent.map((s) => (s.pendingMs >= MIN_GAP_MS / 2 ? s.pendingMs : 0))),
  );
  const floor = recent.length >= WINDOW / 2 ? Math.min(hi * (1 - REPROBE), loose || hi) : loose;
  const lo = tight.length > 0 ? Math.max(...tight.map((s) => s.pendingMs)) : floor;
  const runs = recent.length;
  if (hi - lo > TIGHT * hi) {
    // Not narrowed down yet. A probe that misses costs a 2 s wait, one that hits only its distance
    // past the finish, so probes sit nearer the earliest "finished" than the middle; and where
    // reads every 2 s can follow up to `hi` within the fixed count, so a miss ends in a tight bracket.
    const aimMs = unclipped(Math.round(lo + PROBE * (hi - lo)), hi);
    return { aimMs, durationMs: Math.round((lo + hi) / 2), runs };
  }
  if (lo - hi <= NOISE * hi) {
    // One duration, give or take a little: aim a margin past the latest "still running", which
    // hits do not move (aiming at the earliest "finished" would creep, as each hit sets it).
    const aimMs = Math.round(lo + Math.max(TIGHT * hi, MARGIN_MS));
    return { aimMs, durationMs: Math.round(Math.max(lo, hi)), runs };
  }
  // Durations vary: choose the first read that would have seen these tasks soonest overall.
  const estimates = (tight.length >= 3 ? tight : recent).map((s) =>
    s.pendingMs > 0 ? (s.pendingMs + s.seenMs) / 2 : s.seenMs,
  );
  let aimMs = estimates[0] ?? hi;
  let best = Number.POSITIVE_INFINITY;
  for (const aim of estimates) {
    const total = estimates.reduce((sum, d) => sum + seenBy(aim, d) - d, 0);
    if (total < best) [best, aimMs] = [total, aim];
  }
  return { aimMs: Math.round(aimMs), durationMs: Math.round(quantile(estimates, 0.5)), runs };
}

/**
 * The learned schedule for one wait, which began `sinceSubmitMs` after the task was submitted
 * (0 right after submission; more for a later poll_task).
 */
export function learnedSchedule(p: Plan, sinceSubmitMs: number): PollSchedule {
  // The task was just seen when the wait began (the submission's answer, or poll_task's own
  // read), so even the first read keeps the 2 s gap.
  const earliest = (n: number, lastMs: number | undefined) =>
    Math.max(fixedReadMs(n), (lastMs ?? 0) + MIN_GAP_MS);
  return {
    dueMs: (n, lastMs) => Math.max(n === 0 ? p.aimMs - sinceSubmitMs : 0, earliest(n, lastMs)),
    earliestMs: earliest,
    expected: { durationMs: p.durationMs, runs: p.runs, sinceSubmitMs },
  };
}

/** "about 40 s left, from the last 12 runs", or undefined for the fixed schedule. */
export function expectation(s: PollSchedule, elapsedMs: number): string | undefined {
  const e = s.expected;
  if (!e) return undefined;
  const left = Math.round((e.durationMs - e.sinceSubmitMs - elapsedMs) / 1000);
  const runs = `from the last ${e.runs} run${e.runs === 1 ? "" : "s"}`;
  return left > 0 ? `about ${left} s left, ${runs}` : `expected about now, ${runs}`;
}
