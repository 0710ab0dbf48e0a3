/** A record as `list_requests` shows it, and the cursors of its pages. */
import type { ErrorSummary } from "./error-summary.js";
import type { RecordState, StoredRecord } from "./record.js";
import { lastSighting } from "./record-rules.js";

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
