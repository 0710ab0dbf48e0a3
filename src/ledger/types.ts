/** The ledger's public shapes (see the team brief's agreed API). */
import type { LedgerRecord } from "./record.js";
import type { BackoffOptions } from "./replay.js";

export interface RunRequest {
  keyHash: string;
  tool: string;
  endpoint: string;
  bytes: string;
  idempotencyKey?: string;
  signal?: AbortSignal;
  maxAttempts?: number;
  maxElapsedMs?: number;
  onAttempt?: (n: number, err?: unknown) => void;
}

export interface RunResult<T> {
  identity: string;
  result: T;
  reused: boolean;
}

export interface Ledger {
  run<T>(req: RunRequest, send: Send<T>, ref: Ref<T>): Promise<RunResult<T>>;
  markDelivered(keyHash: string, identity: string, delivered: boolean): Promise<void>;
  list(keyHash: string, o?: { state?: string }): Promise<LedgerRecord[]>;
  close(): Promise<void>;
  /** Records left open when this ledger opened (unresolved, or succeeded but never delivered). */
  readonly recovered: ReadonlyArray<LedgerRecord & { keyHash: string }>;
  /** Back end and guarantees, for diagnostics (no credentials). */
  readonly description: string;
  /** Said at start and in list_requests when the store was accepted with `?durability=relaxed`. */
  readonly durabilityNote?: string | undefined;
}

/** Sends the stored bytes under the stored identity; it owns HTTP, the ledger does not. */
export type Send<T> = (identity: string, bytes: string, signal?: AbortSignal) => Promise<T>;
/** What to keep from a success: the task ID (media) or response ID (text, extraction). */
export type Ref<T> = (result: T) => { taskId?: string; responseId?: string };

export interface LedgerSettings {
  retentionMs: number;
  now: () => number;
  backoff: BackoffOptions;
  random: () => number;
}
