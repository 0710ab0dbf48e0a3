/**
 * The one place errors become tool results, and the shapes every tool result takes.
 * A failure is never a crash or a protocol error: it is an `isError` result whose text
 * starts with the code, names the field or cause, and says what to do next.
 */
import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/server";
import { ServiceError } from "../client/service-errors.js";
import { IdentifiedError } from "../ledger/ledger-errors.js";
import { CodedError } from "../shared/coded-error.js";
import { LocalRefusal } from "../shared/local-refusals.js";
import { scrubKeyShapes } from "../shared/scrub.js";
import type { KeyOrigin } from "./context.js";
import { keyRefusedStep, nextStep } from "./next-steps.js";

/** A paid call under a key the service has already refused: refused here, before any record. */
export const keyRefused = (origin: KeyOrigin): LocalRefusal =>
  new LocalRefusal(
    "INVALID_API_KEY",
    "The service refused this key earlier (revoked, expired or unknown), so this paid call was not sent and nothing was recorded or spent.",
    keyRefusedStep(origin),
  );

/**
 * Defence in depth: no text we return may carry anything shaped like a key, whatever a message
 * quoted. The engine's own key, in every form, is scrubbed by the wrapper of each tool (define-tool.ts).
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
  // The service retains this outcome (docs/service.md#errors, ANALYSIS_FAILED).
  if (err.cause instanceof ServiceError && err.cause.code === "ANALYSIS_FAILED") {
    return `Identity (idempotencyKey): ${id}, retained: calling again with the same arguments replays it and returns this same outcome with no new charge. For a new analysis, change the request (prompt or model) or pass a new idempotencyKey.`;
  }
  if (err.state === "closed" && err.cause instanceof ServiceError && err.cause.outcome === "unsent") {
    return `Identity (idempotencyKey): ${id}, closed: nothing was sent under it, so nothing was charged; the same call again is a new request.`;
  }
  return err.state === "closed"
    ? `Identity (idempotencyKey): ${id}, now closed; a corrected call gets a new identity.`
    : `Identity (idempotencyKey): ${id}. Keep it: calling again with the same arguments, or with idempotencyKey "${id}", replays this request and never charges twice.`;
}

/**
 * A failure whose next step the tool knows better than its code's default, because it knows what
 * was asked (poll_task given a request identity where a task ID belongs, for one).
 */
export class WithNextStep extends Error {
  override readonly name = "WithNextStep";
  constructor(
    readonly failure: unknown,
    readonly next: string,
  ) {
    super(failure instanceof Error ? failure.message : String(failure));
  }
}

/** Code and actionable text for any error; used by tool results and resource reads. */
export function describeError(err: unknown, next?: string): DescribedError {
  if (err instanceof WithNextStep) return describeError(err.failure, err.next);
  if (err instanceof IdentifiedError) {
    const inner = describeError(err.cause, next);
    return { ...inner, text: `${inner.text} ${identityNote(err)}` };
  }
  if (err instanceof ServiceError) {
    const parts = [`${err.code}: ${sentence(err.message)}`];
    if (err.status !== undefined) parts.push(`(HTTP ${err.status})`);
    const step =
      next ??
      nextStep({
        code: err.code,
        action: err.action,
        message: err.message,
        requestKind: err.requestKind,
        definitive: err.outcome === "definitive",
      });
    parts.push(`Next: ${step}`);
    return { code: err.code, text: parts.join(" "), status: err.status };
  }
  // Every other error of ours (src/shared/coded-error.ts): local refusals, the ledger's.
  if (err instanceof CodedError) {
    const step = next ?? nextStep({ code: err.code, action: err.action, message: err.message });
    return { code: err.code, text: `${err.code}: ${sentence(err.message)} Next: ${step}` };
  }
  const message = err instanceof Error ? err.message : String(err);
  return {
    code: "INTERNAL_ERROR",
    text: `INTERNAL_ERROR: ${sentence(message)} Next: this is a fault of the MCP server; report it. If it followed a submission, call list_requests to find its identity.`,
  };
}

/**
 * An error as a tool result, built once: the description (with `next` where the call knows its
 * next step better than the code's default), then any `notes` the call adds.
 */
export function errorResult(
  err: unknown,
  o: { next?: string | undefined; notes?: string[] } = {},
): CallToolResult {
  const { code, text, status } = describeError(err, o.next);
  const meta: Record<string, unknown> = { code };
  if (status !== undefined) meta.status = status;
  const whole = [text, ...(o.notes ?? [])].join("\n");
  return { content: [{ type: "text", text: redact(whole) }], isError: true, _meta: meta };
}

/**
 * What every successful result's structuredContent carries: `next`, the step to take within the
 * host's limits ("nothing: done" where there is none), since some hosts (Claude Code) show their
 * model only structuredContent and never the text's "Next: …" line.
 */
export type Structured = Record<string, unknown> & { next: string };

/**
 * A successful result: text for the model, structuredContent (with its `next`) for programs and for
 * hosts that show only that. A text without its own "Next:" line gets the structured one, so the
 * two never say different things.
 */
export function okResult(text: string, structured: Structured, extra: ContentBlock[] = []): CallToolResult {
  const whole = /(^|\n)Next: /.test(text) ? text : `${text}\nNext: ${structured.next}`;
  return {
    content: [{ type: "text", text: redact(whole) }, ...extra],
    structuredContent: structured,
  };
}

/**
 * A task's result: a generation the service ended as failed (or cancelled) is an error on every
 * path (the synchronous answer, poll_task, an MCP task's result), as hosts show `isError` as a
 * failure and VS Code reads a failed MCP task's result from nowhere else; the task, its identity
 * and `next` stay in structuredContent.
 */
export function taskResult(
  text: string,
  structured: Structured & { task: { status: string } },
  extra: ContentBlock[] = [],
): CallToolResult {
  const result = okResult(text, structured, extra);
  return failedGeneration(structured.task.status) ? { ...result, isError: true } : result;
}

export const failedGeneration = (status: unknown): boolean => status === "failed" || status === "cancelled";

/**
 * Runs a handler; anything it throws becomes an error result. The only try/catch tools need.
 * `next` gives the next step for a code where the caller knows better (a refused key's origin).
 */
export async function guard<T extends object>(
  run: () => Promise<T>,
  next?: (code: string) => string | undefined,
): Promise<T | CallToolResult> {
  try {
    return await run();
  } catch (err) {
    return errorResult(err, { next: next?.(describeError(err).code) });
  }
}
