/**
 * The one place errors become tool results, and the shapes every tool result takes.
 * A failure is never a crash or a protocol error: it is an `isError` result whose text
 * starts with the code, names the field or cause, and says what to do next.
 */
import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/server";
import { scrubKeyShapes } from "../client/scrub.js";
import { ServiceError } from "../client/service-errors.js";
import { IdentifiedError } from "../ledger/record.js";
import { nextStep } from "./next-steps.js";

/** Refusals decided here rather than by the service (the user said no, a file is off limits). */
export class LocalRefusal extends Error {
  override readonly name = "LocalRefusal";
  constructor(
    readonly code: string,
    message: string,
    readonly action: string,
  ) {
    super(message);
  }
}

export const declined = (what: string): LocalRefusal =>
  new LocalRefusal(
    "USER_DECLINED",
    `The user declined ${what}; nothing was sent and no Gems were spent.`,
    "Ask the user what to change before trying again.",
  );

/**
 * Defence in depth: no text we return may carry anything shaped like a key, whatever a message
 * quoted. The engine's own key, in every form, is scrubbed by the wrapper of each tool (tool.ts).
 */
export const redact = scrubKeyShapes;

const sentence = (s: string): string => (/[.!?]$/.test(s.trim()) ? s.trim() : `${s.trim()}.`);

export interface DescribedError {
  code: string;
  text: string;
  status?: number | undefined;
}

/** What an identity's caller may do: replay it while it is open, or start anew once closed. */
function identityNote(err: IdentifiedError): string {
  const id = err.identity;
  // The service retains this outcome (service interface, "POST /api/generate/extract/video").
  if (err.cause instanceof ServiceError && err.cause.code === "ANALYSIS_FAILED") {
    return `Identity (idempotencyKey): ${id}, retained: calling again with the same arguments replays it and returns this same outcome with no new charge. For a new analysis, change the request (prompt or model) or pass a new idempotencyKey.`;
  }
  return err.state === "closed"
    ? `Identity (idempotencyKey): ${id}, now closed; a corrected call gets a new identity.`
    : `Identity (idempotencyKey): ${id}. Keep it: calling again with the same arguments, or with idempotencyKey "${id}", replays this request and never charges twice.`;
}

/** What a caller knows better than the generic table: the next step for this call's error. */
export interface Described {
  next?: string | undefined;
}

/** Code and actionable text for any error; used by tool results and resource reads. */
export function describeError(err: unknown, o: Described = {}): DescribedError {
  if (err instanceof IdentifiedError) {
    const inner = describeError(err.cause, o);
    return { ...inner, text: `${inner.text} ${identityNote(err)}` };
  }
  if (err instanceof ServiceError) {
    const parts = [`${err.code}: ${sentence(err.message)}`];
    if (err.status !== undefined) parts.push(`(HTTP ${err.status})`);
    const next =
      o.next ??
      nextStep({
        code: err.code,
        action: err.action,
        requestKind: err.requestKind,
        definitive: err.outcome === "definitive",
      });
    parts.push(`Next: ${next}`);
    return { code: err.code, text: parts.join(" "), status: err.status };
  }
  // Local refusals of every layer (arguments, the ledger's IDEMPOTENCY_CONFLICT and LEDGER_*,
  // this layer's LocalRefusal) carry a code and an action.
  const local = err as { code?: unknown; action?: unknown } | null;
  if (err instanceof Error && typeof local?.code === "string" && typeof local.action === "string") {
    const next = o.next ?? nextStep({ code: local.code, action: local.action });
    return { code: local.code, text: `${local.code}: ${sentence(err.message)} Next: ${next}` };
  }
  const message = err instanceof Error ? err.message : String(err);
  return {
    code: "INTERNAL_ERROR",
    text: `INTERNAL_ERROR: ${sentence(message)} Next: this is a fault of the MCP server; report it. If it followed a submission, call list_requests to find its identity.`,
  };
}

/** An error as a tool result, built once: the description, then any `notes` the call adds. */
export function errorResult(err: unknown, o: Described & { notes?: string[] } = {}): CallToolResult {
  const { code, text, status } = describeError(err, o);
  const meta: Record<string, unknown> = { code };
  if (status !== undefined) meta.status = status;
  const whole = [text, ...(o.notes ?? [])].join("\n");
  return { content: [{ type: "text", text: redact(whole) }], isError: true, _meta: meta };
}

/** A successful result: text for the model, structuredContent for programs. */
export function okResult(
  text: string,
  structured: Record<string, unknown>,
  extra: ContentBlock[] = [],
): CallToolResult {
  return {
    content: [{ type: "text", text: redact(text) }, ...extra],
    structuredContent: structured,
  };
}

/** Runs a handler; anything it throws becomes an error result. The only try/catch tools need. */
export async function guard<T extends object>(run: () => Promise<T>): Promise<T | CallToolResult> {
  try {
    return await run();
  } catch (err) {
    return errorResult(err);
  }
}
