/**
 * Reading answers: bodies read under a deadline, error envelopes (or bodies that are not
 * envelopes, or not JSON at all) turned into the ServiceError family, and successful
 * bodies parsed with the schemas of docs/service.md#responses.
 */
import type { z } from "zod";
import { parseRetryAfter } from "./backoff.js";
import {
  errorFromResponse,
  InvalidResponseError,
  type RequestKind,
  type ServiceError,
} from "./service-errors.js";

const ERROR_TEXT_MAX = 300;

/**
 * Reads a body as text, giving up when `signal` aborts even if the body's source ignores
 * the abort (some fetch implementations only abort the headers wait).
 */
export async function readText(res: Response, signal: AbortSignal): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const onAbort = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const next = await reader.read();
      if (signal.aborted) throw signal.reason;
      if (next.done) break;
      text += decoder.decode(next.value, { stream: true });
    }
    return text + decoder.decode();
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** Reads an error response into the family: envelope when it is one, the status alone when not. */
export async function errorOf(
  res: Response,
  kind: RequestKind,
  what: string,
  signal?: AbortSignal,
): Promise<ServiceError> {
  let text = "";
  try {
    text = signal ? await readText(res, signal) : await res.text();
  } catch {
    // The status alone still classifies the failure.
  }
  const answer = {
    status: res.status,
    statusText: res.statusText,
    retryAfter: res.headers.get("retry-after"),
  };
  return errorOfText(answer, text, kind, what);
}

/** An error answer already read, into the family (errorOf for a Response). */
export function errorOfText(
  res: { status: number; statusText: string; retryAfter: string | null | undefined },
  text: string,
  kind: RequestKind,
  what: string,
): ServiceError {
  let code: string | undefined;
  let message: string | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof parsed?.error?.message === "string") message = parsed.error.message;
    if (typeof parsed?.error?.code === "string") code = parsed.error.code;
  } catch {
    // Not JSON (a proxy's HTML page, an empty HEAD body): keep a short, printable excerpt.
  }
  if (message === undefined) {
    const excerpt = text.replace(/\s+/g, " ").trim().slice(0, ERROR_TEXT_MAX);
    message = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}${excerpt ? `: ${excerpt}` : ""}`;
  }
  return errorFromResponse({
    status: res.status,
    code,
    message: `${what}: ${message}`,
    requestKind: kind,
    retryAfterMs: parseRetryAfter(res.retryAfter ?? null),
  });
}

/** Parses a JSON text with a schema; failures are InvalidResponseError (uncertain for submissions). */
export function parseBody<S extends z.ZodType>(
  schema: S,
  text: string,
  status: number,
  kind: RequestKind,
  what: string,
): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new InvalidResponseError({
      status,
      code: undefined,
      message: `${what}: the response is not JSON`,
      requestKind: kind,
      cause,
    });
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "(body)";
  throw new InvalidResponseError({
    status,
    code: undefined,
    message: `${what}: unexpected response at ${where}: ${issue?.message ?? "invalid"}`,
    requestKind: kind,
  });
}
