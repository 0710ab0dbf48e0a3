/** The ledger's public shapes: what `openLedger` returns and what a paid call gives it to run. */
import type { DurationSample } from "../shared/poll-schedule.js";
import type { ChunkStore } from "./chunk-store.js";
import type { DayBudget } from "./day-budget.js";
import type { KeyedStore } from "./keyed-store.js";
import type { LedgerRecord } from "./listing.js";
import type { TaskSeen, TaskStatusSeen } from "./record.js";
import type { BackoffOptions } from "./replay.js";

export interface RunRequest {
  keyHash: string;
  tool: string;
  endpoint: string;
  bytes: string;
  idempotencyKey?: string;
  /** The model the body names, kept on the record (durations are learned per model). */
  model?: string;
  signal?: AbortSignal;
  /**
   * Longest wait for one attempt's answer before it counts as uncertain and is replayed (media
   * submissions answer at once; a streamed answer may rightly take as long as the whole run).
   */
  attemptMs?: number;
  maxAttempts?: number;
  maxElapsedMs?: number;
  onAttempt?: (n: number, err?: unknown) => void;
  /**
   * The identity is claimed and committed with the bytes (or, for a call that joined an identical
   * one in flight, the leader's is): a caller may answer from here on and leave the sending to the
   * run (a paid call handing back an MCP task). May be called again, with the same identity, if a
   * joined leader's caller gave up and the run started over.
   */
  onClaimed?: (identity: string) => void;
  /** Removes the key in force from error messages before they are stored (see `summarize`). */
  scrub?: (text: string) => string;
}

export interface RunResult<T> {
  identity: string;
  result: T;
  /** The identity existed before this call: a replay of an earlier call, or a join of one in flight. */
  reused: boolean;
  /** This call waited for an identical call in flight in this process and shares its result. */
  joined: boolean;
  /** For a call that joined: 1 for the first to join that flight, 2 for the next, and so on. */
  joinOrder?: number;
  /**
   * The answer carrying this result is on its way to the client. From now until `settle`, an
   * identical call and a listing of this key wait (briefly) for it, so what they see is the mark
   * and the answer as one step. `settle(true)` marks the record delivered; `settle(false)` leaves
   * it undelivered (an identical call replays it). Never rejects.
   */
  handOver(): DeliveryMark;
}

export interface DeliveryMark {
  settle(delivered: boolean): Promise<void>;
}

export interface Ledger {
  run<T>(req: RunRequest, send: Send<T>, ref: Ref<T>): Promise<RunResult<T>>;
  markDelivered(keyHash: string, identity: string, delivered: boolean): Promise<void>;
  /** A key's records, newest first; a page of them with `limit` and `cursor`. */
  list(keyHash: string, o?: ListOptions): Promise<LedgerRecord[]>;
  /** Records, once, when a wait saw this key's task turn terminal (and last saw it running). */
  noteSeen(keyHash: string, taskId: string, seen: TaskSeen): Promise<void>;
  /** Keeps the status a tool last read for this key's task (shown by list_requests). */
  noteStatus(keyHash: string, taskId: string, seen: TaskStatusSeen): Promise<void>;
  /** The submission time (its acceptance, when known: durations.ts) and model of this key's task. */
  taskOrigin(keyHash: string, taskId: string): Promise<{ createdAt: number; model?: string } | undefined>;
  /** How long this key's recent successful tasks of `model` took, newest first. */
  durations(keyHash: string, model: string, limit?: number): Promise<DurationSample[]>;
  /** Keyed values with expiry in the ledger's own store, shared by every replica (keyed-store.ts). */
  keyed(): Promise<KeyedStore>;
  /** Binary upload chunks in the ledger's own store, shared by every replica (chunk-store.ts). */
  chunks(): Promise<ChunkStore>;
  close(): Promise<void>;
  /** Records left open when this ledger opened (unresolved, or succeeded but never delivered). */
  readonly recovered: ReadonlyArray<LedgerRecord & { keyHash: string }>;
  /** Back end and guarantees, for diagnostics (no credentials). */
  readonly description: string;
  /** Said at start and in list_requests when the store was accepted with `?durability=relaxed`. */
  readonly durabilityNote?: string | undefined;
}

export interface ListOptions {
  /**
   * A state name, `open` (unresolved, or succeeded and never delivered), `unfinished` (those, and
   * succeeded with a task not seen finish) or `all`.
   */
  state?: string;
  /** At most this many (default: all). */
  limit?: number;
  /** Records after this one (listCursor of the last record of the previous page). */
  cursor?: string;
  taskId?: string;
  idempotencyKey?: string;
}

/**
 * Sends the stored bytes under the stored identity, and nothing else: it owns HTTP, the ledger
 * does not, and it knows nothing of the call that asked (the ledger decides when to send).
 */
export type Send<T> = (identity: string, bytes: string, signal?: AbortSignal) => Promise<T>;
/**
 * What the record keeps of a success: the task ID (media) or response ID (text, extraction), and the
 * task's status as the submission answered it, kept as its last status read (record.ts).
 */
export type Ref<T> = (result: T) => { taskId?: string; responseId?: string; taskStatus?: string };

export interface LedgerSettings {
  retentionMs: number;
  /** Each key's new records and bytes per UTC day (day-budget.ts); none: unbounded. */
  dayBudget?: DayBudget;
  now: () => number;
  backoff: BackoffOptions;
  random: () => number;
}
