/**
 * What the ledger stores about one logical request, and the small pure rules over it.
 * The API key itself never appears here: records carry `keyHash` only.
 */
import { createHash, randomBytes } from "node:crypto";
import { type Scrub, scrubKeyShapes } from "../client/scrub.js";
import { isTerminal, LIMITS } from "../config/service-limits.js";

/** `prepared`: committed, no byte sent yet (records of earlier versions; a new claim is recorded as
 * `sent`, its send following at once). `sent`: an attempt is (or was, before a crash) on the wire.
 * `uncertain`: the last attempt's outcome is unknown. `succeeded`: the service accepted it.
 * `closed`: refused or released for good; an identical new call gets a new identity. */
export type RecordState = "prepared" | "sent" | "uncertain" | "succeeded" | "closed";
export const RECORD_STATES: readonly RecordState[] = ["prepared", "sent", "uncertain", "succeeded", "closed"];

export interface ErrorSummary {
  status?: number;
  code: string;
  message: string;
}

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

/** The listing shape (`list_requests`): no body bytes, ISO times. */
export interface LedgerRecord {
  idempotencyKey: string;
  tool: string;
  endpoint: string;
  state: RecordState;
  taskId?: string;
  responseId?: string;
  /** From the stored body, so a person can tell requests apart. */
  model?: string;
  /** The start of the prompt (or of the last user message), from the stored body. */
  prompt?: string;
  closedReason?: ErrorSummary;
  /** The task's last status a tool read (`state` says only that the service accepted the request). */
  taskStatus?: string;
  /** When that status was read (ISO). */
  taskSeenAt?: string;
  delivered: boolean;
  attempts: number;
  lastError?: ErrorSummary;
  createdAt: string;
  updatedAt: string;
  expiresAt?: string;
}

const KEY_DOMAIN = "generation-mcp/ledger/api-key/v1\u0000";

/** sha256 of the key under a domain prefix, so the hash is useless anywhere else. */
export function hashKey(apiKey: string): string {
  return createHash("sha256").update(KEY_DOMAIN).update(apiKey, "utf8").digest("hex");
}

export function bodyHash(bytes: string): string {
  return createHash("sha256").update(bytes, "utf8").digest("hex");
}

/** A fresh identity: sortable by time, 64 random bits, within the service's pattern. */
export function newIdentity(now: number): string {
  const id = `gm-${now.toString(36)}-${randomBytes(8).toString("hex")}`;
  if (!LIMITS.idempotencyKeyPattern.test(id)) throw new Error(`generated identity ${id} is invalid`);
  return id;
}

/** Outcome unknown: the next identical call must resume it, never start another. */
export function isUnresolved(rec: StoredRecord): boolean {
  return rec.state === "prepared" || rec.state === "sent" || rec.state === "uncertain";
}

/** Closed with an outcome the service keeps for replay: an identical call replays the identity. */
export function isRetained(rec: StoredRecord): boolean {
  return rec.state === "closed" && rec.retained === true;
}

/** Open = must not expire: unresolved, or succeeded without the result reaching the client. */
export function isOpen(rec: StoredRecord): boolean {
  return isUnresolved(rec) || (rec.state === "succeeded" && !rec.delivered);
}

/**
 * Accepted, with a task no tool has seen finish (queued, processing, or not read since): its
 * result is still to come, whether or not the first answer reached the client.
 */
export function isRunningTask(rec: StoredRecord): boolean {
  if (rec.state !== "succeeded" || rec.taskId === undefined) return false;
  const status = lastSighting(rec)?.status;
  return status === undefined || !isTerminal(status);
}

/** `succeeded` and `closed` are final: their state never changes again (other fields may). */
export function isFinal(rec: StoredRecord): boolean {
  return rec.state === "succeeded" || rec.state === "closed";
}

/**
 * The one rule every write obeys: it replaces exactly the version it was computed from, and a
 * record only moves forward: once `succeeded` or `closed`, its state stays. A write that breaks
 * it is a bug in the caller, refused before it reaches the store.
 */
export function checkAdvance(prev: StoredRecord, next: StoredRecord): void {
  if (next.version !== prev.version + 1 || next.identity !== prev.identity || next.keyHash !== prev.keyHash) {
    throw new LedgerError("LEDGER_RACE", `a write to ${prev.identity} skipped a version`);
  }
  if (isFinal(prev) && next.state !== prev.state) {
    throw new LedgerError(
      "LEDGER_BACKWARD",
      `the record ${prev.identity} is ${prev.state} and cannot become ${next.state}`,
    );
  }
}

export function isExpired(rec: StoredRecord, now: number): boolean {
  return rec.expiresAt !== undefined && rec.expiresAt <= now;
}

/**
 * `state` filter of `list`: a state name; `open` for the records that never expire; `unfinished`
 * for those and the accepted ones whose task is still running (what is left to pick up).
 */
export function matchesState(rec: StoredRecord, state: string | undefined): boolean {
  if (state === undefined || state === "all") return true;
  if (state === "open") return isOpen(rec);
  if (state === "unfinished") return isOpen(rec) || isRunningTask(rec);
  return rec.state === state;
}

export function toListing(rec: StoredRecord): LedgerRecord {
  const out: LedgerRecord = {
    idempotencyKey: rec.identity,
    tool: rec.tool,
    endpoint: rec.endpoint,
    state: rec.state,
    delivered: rec.delivered,
    attempts: rec.attempts,
    createdAt: new Date(rec.createdAt).toISOString(),
    updatedAt: new Date(rec.updatedAt).toISOString(),
  };
  if (rec.taskId !== undefined) out.taskId = rec.taskId;
  if (rec.responseId !== undefined) out.responseId = rec.responseId;
  const { model: named, prompt } = describeBody(rec.bytes);
  // The model the caller recorded, else the one the stored body names.
  const model = rec.model ?? named;
  if (model !== undefined) out.model = model;
  if (prompt !== undefined) out.prompt = prompt;
  if (rec.closedReason !== undefined) out.closedReason = rec.closedReason;
  const sighting = lastSighting(rec);
  if (sighting !== undefined) {
    out.taskStatus = sighting.status;
    out.taskSeenAt = new Date(sighting.at).toISOString();
  }
  if (rec.lastError !== undefined) out.lastError = rec.lastError;
  if (rec.expiresAt !== undefined) out.expiresAt = new Date(rec.expiresAt).toISOString();
  return out;
}

/** The newer of the last status read and the terminal sighting a wait noted. */
function lastSighting(rec: StoredRecord): TaskStatusSeen | undefined {
  const terminal = rec.seen === undefined ? undefined : { status: rec.seen.status, at: rec.seen.terminalAt };
  if (terminal === undefined) return rec.lastStatus;
  return rec.lastStatus !== undefined && rec.lastStatus.at > terminal.at ? rec.lastStatus : terminal;
}

const PROMPT_START = 80;

/** The model and the start of the prompt of a stored body (media, chat or extraction). */
export function describeBody(bytes: string): { model?: string; prompt?: string } {
  let body: { model?: unknown; prompt?: unknown; messages?: unknown };
  try {
    body = JSON.parse(bytes) as typeof body;
  } catch {
    return {};
  }
  const out: { model?: string; prompt?: string } = {};
  if (typeof body?.model === "string") out.model = body.model;
  let text: unknown = body?.prompt;
  if (text === undefined && Array.isArray(body?.messages)) {
    const users = body.messages.filter((m: { role?: unknown }) => m?.role === "user");
    text = (users.at(-1) as { content?: unknown } | undefined)?.content;
  }
  if (typeof text === "string") {
    const flat = text.replace(/\s+/g, " ").trim();
    out.prompt = flat.length > PROMPT_START ? `${flat.slice(0, PROMPT_START - 1)}…` : flat;
  }
  return out;
}

/** An opaque position after `rec` in the listing order, for the next page. */
export function listCursor(rec: LedgerRecord): string {
  return Buffer.from(JSON.stringify([Date.parse(rec.createdAt), rec.idempotencyKey])).toString("base64url");
}

/** The position a cursor from listCursor names; undefined for anything else. */
export function parseListCursor(cursor: string): { createdAt: number; identity: string } | undefined {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(v) && Number.isSafeInteger(v[0]) && typeof v[1] === "string") {
      return { createdAt: v[0] as number, identity: v[1] };
    }
  } catch {
    // not ours
  }
  return undefined;
}

/** Reads a stored value defensively: a record we cannot read is an error, never "no record". */
export function parseRecord(raw: unknown, where: string): StoredRecord {
  const r = raw as Partial<StoredRecord> | null;
  if (
    r === null ||
    typeof r !== "object" ||
    r.v !== 1 ||
    typeof r.identity !== "string" ||
    typeof r.bytes !== "string" ||
    typeof r.keyHash !== "string" ||
    typeof r.state !== "string" ||
    !RECORD_STATES.includes(r.state)
  ) {
    throw new LedgerError("LEDGER_CORRUPT", `ledger entry ${where} is not a readable record`);
  }
  // Records written before versions existed read as version 0.
  return (typeof r.version === "number" ? r : { ...r, version: 0 }) as StoredRecord;
}

const MAX_MESSAGE = 500;

/**
 * Keeps what `list_requests` needs from an error; messages are bounded. The service may echo the
 * key in a message, and the ledger knows only its hash: `scrub`, from the caller who holds the key,
 * removes it before anything is stored (key shapes are removed in any case).
 */
export function summarize(err: unknown, scrub: Scrub = scrubKeyShapes): ErrorSummary {
  const e = err as { status?: unknown; code?: unknown; name?: unknown; message?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : typeof e?.name === "string" ? e.name : "UNKNOWN_ERROR";
  const message = typeof e?.message === "string" ? e.message : String(err);
  const clean = (text: string) => scrubKeyShapes(scrub(text));
  // Scrubbed whole, then cut: a cut first could leave part of a key no pattern recognises.
  const out: ErrorSummary = { code: clean(code), message: clean(message).slice(0, MAX_MESSAGE) };
  if (typeof e?.status === "number") out.status = e.status;
  return out;
}

/** The ledger itself failed (store unreachable, read-only, corrupt): nothing is sent. */
export class LedgerError extends Error {
  override readonly name = "LedgerError";
  readonly code: string;
  readonly action: string;
  constructor(code: string, message: string, options?: { cause?: unknown; action?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.action = options?.action ?? "The request ledger could not be read or written, so nothing was sent.";
  }
}

/** Same `idempotencyKey`, different request: refused locally, nothing sent (docs/idempotency.md#rules, 4). */
export class IdempotencyConflictError extends Error {
  override readonly name = "IdempotencyConflictError";
  readonly code = "IDEMPOTENCY_CONFLICT";
  readonly field = "idempotencyKey";
  readonly identity: string;
  readonly action = "This identity was already used for a different request; nothing was sent.";
  constructor(identity: string, detail: string) {
    super(
      `idempotencyKey: "${identity}" was already used for a different request (${detail}); nothing was sent`,
    );
    this.identity = identity;
  }
}

/**
 * A run that failed once its identity was claimed: the failure as thrown (`cause`), the identity,
 * and the state its record was left in. `closed` means refused for good (an identical call gets a
 * new identity); any other state means an identical call replays this identity and its bytes.
 */
export class IdentifiedError extends Error {
  override readonly name = "IdentifiedError";
  override readonly cause: unknown;
  readonly identity: string;
  readonly state: RecordState;
  constructor(cause: unknown, identity: string, state: RecordState) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.cause = cause;
    this.identity = identity;
    this.state = state;
  }
}
