/**
 * What the ledger stores about one logical request: its states and the stored form. The API key
 * itself never appears here: records carry `keyHash` only (identity.ts). The rules over a record
 * are in record-rules.ts, its listing shape in listing.ts.
 */
import type { ErrorSummary } from "./error-summary.js";

/** `prepared`: committed, no byte sent yet (records of earlier versions; a new claim is recorded as
 * `sent`, its send following at once). `sent`: an attempt is (or was, before a crash) on the wire.
 * `uncertain`: the last attempt's outcome is unknown. `succeeded`: the service accepted it.
 * `closed`: refused or released for good; an identical new call gets a new identity. */
export type RecordState = "prepared" | "sent" | "uncertain" | "succeeded" | "closed";
export const RECORD_STATES: readonly RecordState[] = ["prepared", "sent", "uncertain", "succeeded", "closed"];

/** The stored form (JSON, one per identity per key hash). Times are epoch milliseconds. */
export interface StoredRecord {
  v: 1;
  /** Bumped by every write: a write lands only on the version it was computed from (compare-and-set). */
  version: number;
  identity: string;
  /** The caller chose the identity (`idempotencyKey`) rather than the ledger. */
  explicit: boolean;
  tool: string;
  endpoint: string;
  keyHash: string;
  /** The exact body: every attempt, before or after a restart, sends these bytes. */
  bytes: string;
  bodyHash: string;
  state: RecordState;
  closedReason?: ErrorSummary;
  /** Closed with an answer the service retains for replay (ANALYSIS_FAILED): identical calls reuse it. */
  retained?: boolean;
  taskId?: string;
  responseId?: string;
  /** The model the body names, where it names one. */
  model?: string;
  /**
   * When the service's answer accepting the request arrived, where its first attempt was that answer
   * (an earlier attempt may have created the task sooner): the origin a duration counts from.
   */
  acceptedAt?: number;
  /** When a wait saw the task still running last and terminal first (epoch ms): its duration, for polling. */
  seen?: TaskSeen;
  /** The task's status when a tool last read it (any status), and when: what a listing shows. */
  lastStatus?: TaskStatusSeen;
  /** Whether the result reached the client; a success that never did is reused, not repeated. */
  delivered: boolean;
  attempts: number;
  lastError?: ErrorSummary;
  createdAt: number;
  updatedAt: number;
  /** Only closed records and delivered successes expire; open ones never do. */
  expiresAt?: number;
}

export interface TaskSeen {
  pendingAt?: number;
  terminalAt: number;
  status: string;
}

export interface TaskStatusSeen {
  status: string;
  at: number;
}
